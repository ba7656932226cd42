#!/usr/bin/env bash
# Builds the code sandbox's faster interpreter: CPython 3.11 for WASI at -O3, from Debian's
# source (the python3.11 and zlib packages of bookworm, their upstream tarballs as Debian ships
# them) with Debian's clang 16, lld and wasi-libc. The downloaded interpreter
# (scripts/python-wasm.sh) is an -O0 build; the sandbox uses this one when it is present and
# verified, and the download otherwise.
#
# The build is reproducible: fixed build paths, no debug info, __DATE__/__TIME__ fixed, the
# stdlib zip written in a fixed order with fixed timestamps. Its two outputs are pinned by
# sha256 in sandbox/src/wasm/interpreter.rs (`DEBIAN_O3`); a build that does not match is
# refused.
#
# Usage: scripts/python-wasm-o3.sh [DIR]   (default ~/.cache/atomworld/python-wasm-o3)
# Prints the directory on stdout when done. About 5 minutes on 2 cores, once.
set -euo pipefail

DIR="${1:-$HOME/.cache/atomworld/python-wasm-o3}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PY_TARBALL="python3.11_3.11.2.orig.tar.gz"
PY_SHA256="2411c74bda5bbcfcddaf4531f66d1adc73f247f529aee981b029513aefdbf849"
ZLIB_TARBALL="zlib_1.2.13.dfsg.orig.tar.bz2"
ZLIB_SHA256="71feb7947e3c00ef125f83b79a4e529bde31171e5babe48b391f06758d1ab0a1"
WASM_NAME="python-3.11.2-o3.wasm"
ZIP_NAME="python311.zip"
# Two builds gave these (sandbox/src/wasm/interpreter.rs pins the same values).
WASM_SHA256="5ac18f78a47461c9543003ebe56854b69d1a151fd1999852084f9c3be059780c"
ZIP_SHA256="122b836557787b250e72f97f7f8792cad8ae1332312eaec4a87bacb381063788"
# Fixed, so that no build path differs between builds (sysconfig records them).
BUILD=/tmp/atomworld-cpython-wasi

say() { printf '[python-wasm-o3] %s\n' "$*" >&2; }
die() { printf '[python-wasm-o3] ERROR: %s\n' "$*" >&2; exit 1; }
sha_ok() { [[ -f "$1" ]] && [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$2" ]]; }

if [[ -n "$WASM_SHA256" ]] && sha_ok "$DIR/$WASM_NAME" "$WASM_SHA256" && sha_ok "$DIR/$ZIP_NAME" "$ZIP_SHA256"; then
  say "already built and verified in $DIR"
  echo "$DIR"
  exit 0
fi

packages=(clang-16 lld-16 llvm-16 libclang-rt-16-dev-wasm32 wasi-libc)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [[ ${#missing[@]} -gt 0 ]]; then
  say "installing Debian packages: ${missing[*]}"
  sudo=""; [[ "$(id -u)" -eq 0 ]] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

exec 9>"$BUILD.lock"
flock 9
rm -rf "$BUILD" && mkdir -p "$BUILD/downloads" "$DIR"

fetch() { # tarball sha256 pool-directory
  local cached="$DIR/downloads/$1"
  if ! sha_ok "$cached" "$2"; then
    say "downloading $1 from $MIRROR"
    mkdir -p "$DIR/downloads"
    curl -sSf -o "$cached.part" "$MIRROR/pool/main/$3/$1" || die "download of $1 failed"
    sha_ok "$cached.part" "$2" || die "$1 does not have the sha256 Debian's Sources index gives"
    mv "$cached.part" "$cached"
  fi
  echo "$cached"
}
py_src="$(fetch "$PY_TARBALL" "$PY_SHA256" p/python3.11)"
zlib_src="$(fetch "$ZLIB_TARBALL" "$ZLIB_SHA256" z/zlib)"

export SOURCE_DATE_EPOCH=1675987200   # CPython 3.11.2's release day
export LC_ALL=C TZ=UTC
WASI_CC="clang-16 --target=wasm32-wasi"
# (No spaces in the fixed date: the flags pass through make's shell lines.)
DETERMINISTIC="-g0 -Wno-builtin-macro-redefined -D__DATE__='\"Feb/10/2023\"' -D__TIME__='\"00:00:00\"' -ffile-prefix-map=$BUILD=."
# clang 16 makes int-conversion an error; timemodule.c hands wasi-libc's clockid_t (a pointer)
# to PyModule_AddIntConstant, which clang 14 (WASI SDK 16's) only warned about.
CPYTHON_CFLAGS="$DETERMINISTIC -Wno-error=int-conversion"

say "zlib for wasm32-wasi"
mkdir -p "$BUILD/zlib-src" && tar -xjf "$zlib_src" -C "$BUILD/zlib-src" --strip-components=1
(
  cd "$BUILD/zlib-src"
  CC="$WASI_CC" AR=llvm-ar-16 RANLIB=llvm-ranlib-16 CFLAGS="-O3 $DETERMINISTIC" \
    CHOST=wasm32 ./configure --static --prefix="$BUILD/zlib" >"$BUILD/zlib.log" 2>&1
  make -s -j"$(nproc)" libz.a >>"$BUILD/zlib.log" 2>&1
  make -s install >>"$BUILD/zlib.log" 2>&1
) || die "zlib's build failed (log: $BUILD/zlib.log)"

say "CPython for the build machine (it freezes the stdlib modules of the WASI build)"
mkdir -p "$BUILD/cpython" && tar -xzf "$py_src" -C "$BUILD/cpython" --strip-components=1
mkdir -p "$BUILD/cpython/builddir/build"
(
  cd "$BUILD/cpython/builddir/build"
  # Unoptimised: it only runs the freezing scripts, and what they write does not depend on it.
  OPT="-DNDEBUG -O0" ../../configure -C --disable-test-modules >"$BUILD/configure-build.log" 2>&1
  make -s -j"$(nproc)" all >"$BUILD/make-build.log" 2>&1
) || die "the build machine's CPython failed to build"

say "CPython for wasm32-wasi at -O3"
mkdir -p "$BUILD/cpython/builddir/wasi"
(
  cd "$BUILD/cpython/builddir/wasi"
  CONFIG_SITE=../../Tools/wasm/config.site-wasm32-wasi \
    CC="$WASI_CC" CPP="$WASI_CC -E" AR=llvm-ar-16 RANLIB=llvm-ranlib-16 LDSHARED=wasm-ld-16 \
    CFLAGS="$CPYTHON_CFLAGS" OPT="-DNDEBUG -fwrapv -O3" \
    ZLIB_CFLAGS="-I$BUILD/zlib/include" ZLIB_LIBS="-L$BUILD/zlib/lib -lz" \
    PKG_CONFIG_PATH="" PKG_CONFIG_LIBDIR="$BUILD/zlib/lib/pkgconfig" \
    ../../configure -C --host=wasm32-unknown-wasi --build="$(../../config.guess)" \
      --with-build-python="$BUILD/cpython/builddir/build/python" --disable-test-modules \
      --prefix=/usr/local >"$BUILD/configure-wasi.log" 2>&1
  make -j"$(nproc)" all >"$BUILD/make-wasi.log" 2>&1
) || die "the WASI build failed (logs: $BUILD/configure-wasi.log, $BUILD/make-wasi.log)"

say "the stdlib as compiled modules in a zip (fixed order and timestamps)"
"$BUILD/cpython/builddir/build/python" - "$BUILD/cpython" "$BUILD/$ZIP_NAME" <<'PYEOF'
import importlib.util, marshal, pathlib, sys, zipfile

src, out = pathlib.Path(sys.argv[1]), sys.argv[2]
lib = src / "Lib"
# What a sandboxed program can use: no tests, no GUI, no build or packaging tools.
SKIP = {"test", "tkinter", "idlelib", "turtledemo", "lib2to3", "ensurepip", "venv",
        "distutils", "pydoc_data", "site-packages", "__phello__", "unittest/test"}
sysconfig = next((src / "builddir/wasi").glob("build/lib.*/_sysconfigdata_*.py"))
files = sorted(p for p in lib.rglob("*.py")
               if not any(str(p.relative_to(lib)).startswith(s + "/") for s in SKIP)
               and p.relative_to(lib).parts[0] != "test")
files.append(sysconfig)
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    for p in files:
        rel = p.name if p == sysconfig else str(p.relative_to(lib))
        code = compile(p.read_bytes(), "/usr/local/lib/python311.zip/" + rel, "exec", dont_inherit=True)
        # An unchecked hash-based .pyc: no source timestamp in it.
        data = importlib.util.MAGIC_NUMBER + (3).to_bytes(4, "little") \
            + importlib.util.source_hash(p.read_bytes()) + marshal.dumps(code)
        info = zipfile.ZipInfo(rel[:-3] + ".pyc", date_time=(2023, 2, 10, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        z.writestr(info, data)
PYEOF

install -m 0444 "$BUILD/cpython/builddir/wasi/python.wasm" "$DIR/$WASM_NAME.new"
install -m 0444 "$BUILD/$ZIP_NAME" "$DIR/$ZIP_NAME.new"
say "built: $(sha256sum "$DIR/$WASM_NAME.new" | cut -d' ' -f1)  $WASM_NAME"
say "built: $(sha256sum "$DIR/$ZIP_NAME.new" | cut -d' ' -f1)  $ZIP_NAME"
if [[ -n "$WASM_SHA256" ]]; then
  sha_ok "$DIR/$WASM_NAME.new" "$WASM_SHA256" || die "$WASM_NAME differs from the pinned build"
  sha_ok "$DIR/$ZIP_NAME.new" "$ZIP_SHA256" || die "$ZIP_NAME differs from the pinned build"
fi
mv -f "$DIR/$WASM_NAME.new" "$DIR/$WASM_NAME"
mv -f "$DIR/$ZIP_NAME.new" "$DIR/$ZIP_NAME"
rm -rf "$BUILD"
echo "$DIR"

#!/bin/sh
# Runs "$@" trusting the build host's CA bundle when the build was given one (a build secret:
# a TLS proxy's CA, say), for curl, cargo, npm and pip alike; the bundle is never stored.
if [ -s /run/secrets/ca ]; then
  export CURL_CA_BUNDLE=/run/secrets/ca SSL_CERT_FILE=/run/secrets/ca \
    CARGO_HTTP_CAINFO=/run/secrets/ca NODE_EXTRA_CA_CERTS=/run/secrets/ca \
    npm_config_cafile=/run/secrets/ca PIP_CERT=/run/secrets/ca RUSTUP_USE_CURL=1
fi
exec "$@"

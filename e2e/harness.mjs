// Test harness: starts the real `atomworld` server on a free loopback port against a fresh
// data dir, launches Debian's chromium (software WebGL2 via SwiftShader) through
// playwright-core, and saves a screenshot of every failing test under e2e/artifacts/.
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { before, after } from "node:test";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, "..");
export const artifactsDir = path.join(here, "artifacts");

/** Start the server; resolves with { url, stop } once it prints its address. `configToml`,
 * when given, is written to a file and passed as --config; `addr` (default a free port)
 * is where it listens. */
export async function startServer({ configToml, env, addr } = {}) {
  const bin = process.env.ATOMWORLD_BIN;
  const dist = process.env.ATOMWORLD_DIST ?? path.join(repoRoot, "dist");
  if (!bin) throw new Error("ATOMWORLD_BIN is not set: run the e2e suite through scripts/test.sh");
  const dataDir = mkdtempSync(path.join(tmpdir(), "atomworld-e2e-"));
  const args = ["serve", "--addr", addr ?? "127.0.0.1:0", "--data-dir", dataDir, "--dist", dist];
  if (configToml) {
    const cfg = path.join(dataDir, "config.toml");
    writeFileSync(cfg, configToml);
    args.push("--config", cfg);
  }
  const child = spawn(bin, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...(env ?? {}) },
  });
  let log = "";
  child.stderr.on("data", (d) => (log += d));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 30 s:\n${log}`)), 30_000);
    child.stdout.on("data", (d) => {
      log += d;
      const m = /listening on (http:\/\/\S+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1].replace(/\/$/, ""));
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited early with ${code}:\n${log}`));
    });
  });
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.on("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { url, dataDir, stop, log: () => log };
}

/** Launch chromium with a fresh profile; returns { context, page, consoleErrors, close }. */
export async function launchBrowser() {
  const profile = mkdtempSync(path.join(tmpdir(), "atomworld-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1100, height: 800 },
    args: [
      "--no-sandbox",
      "--use-angle=swiftshader",
      "--enable-unsafe-swiftshader",
      "--ignore-gpu-blocklist",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const consoleErrors = [];
  const unexpected = [];
  page.on("console", (msg) => {
    if (msg.type() !== "error") return;
    consoleErrors.push(msg.text());
    // A refused API request the page then explains (passcode, damaged link, limits) is part
    // of what the tests try; anything else (a script error, a missing asset) is a defect.
    const refusedApi = /^Failed to load resource/.test(msg.text()) && /\/api\//.test(msg.location()?.url ?? "");
    if (!refusedApi) unexpected.push(msg.text());
  });
  page.on("pageerror", (err) => {
    consoleErrors.push(String(err));
    unexpected.push(String(err));
  });
  unexpectedErrors.set(page, unexpected);
  const close = async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  };
  return { context, page, consoleErrors, close };
}

/** Save a screenshot named after the test (used when a test fails). */
export async function saveFailure(page, name) {
  mkdirSync(artifactsDir, { recursive: true });
  const file = path.join(artifactsDir, `${name.replace(/[^a-z0-9]+/gi, "_")}.png`);
  await page.screenshot({ path: file, fullPage: true }).catch(() => {});
  return file;
}

/** Console errors of each page launched by `launchBrowser`, refused API requests left out. */
const unexpectedErrors = new WeakMap();

/**
 * Run `fn`; if it throws, save a screenshot of `page` named `name` and say where. A console
 * error or uncaught exception on `page` while `fn` ran fails the test too (refused `/api/`
 * requests excepted: the tests provoke those on purpose).
 */
export async function withScreenshot(page, name, fn) {
  const errors = unexpectedErrors.get(page) ?? [];
  const start = errors.length;
  try {
    await fn();
  } catch (e) {
    const file = await saveFailure(page, name);
    e.message += `\n(screenshot: ${file})`;
    throw e;
  }
  const fresh = errors.slice(start);
  if (fresh.length) {
    const file = await saveFailure(page, name);
    throw new Error(`console errors during "${name}" (screenshot: ${file}):\n${fresh.join("\n")}`);
  }
}

/**
 * Pixels of the viewer canvas (needs preserveDrawingBuffer, which the viewer sets), read in
 * the page and returned downsampled to at most ~40k pixels so that the transfer stays cheap.
 */
export async function canvasPixels(page, selector = "#viewer") {
  const { width, height, data } = await page.evaluate((sel) => {
    const src = document.querySelector(sel);
    const c = document.createElement("canvas");
    const step = Math.max(1, Math.ceil(Math.sqrt((src.width * src.height) / 40000)));
    c.width = Math.floor(src.width / step);
    c.height = Math.floor(src.height / step);
    const ctx = c.getContext("2d");
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(src, 0, 0, c.width, c.height);
    const px = ctx.getImageData(0, 0, c.width, c.height).data;
    let s = "";
    for (let i = 0; i < px.length; i += 8192) s += String.fromCharCode.apply(null, px.subarray(i, i + 8192));
    return { width: c.width, height: c.height, data: btoa(s) };
  }, selector);
  return { width, height, data: new Uint8Array(Buffer.from(data, "base64")) };
}

/** Hue (degrees), saturation and value of an RGB triple. */
export function hsv(r, g, b) {
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const d = max - min;
  let h = 0;
  if (d > 0) {
    if (max === r) h = ((g - b) / d) % 6;
    else if (max === g) h = (b - r) / d + 2;
    else h = (r - g) / d + 4;
    h *= 60;
    if (h < 0) h += 360;
  }
  return { h, s: max === 0 ? 0 : d / max, v: max / 255 };
}

/**
 * Distinct colours among saturated pixels: hues binned in 10° steps, bins holding at least
 * `minShare` of the saturated pixels, adjacent bins (circularly) merged into one cluster.
 */
export function hueClusters(pixels, minShare = 0.01) {
  const bins = new Array(36).fill(0);
  let saturated = 0;
  const d = pixels.data;
  for (let i = 0; i < d.length; i += 4) {
    const { h, s, v } = hsv(d[i], d[i + 1], d[i + 2]);
    if (s > 0.35 && v > 0.2) {
      bins[Math.floor(h / 10) % 36] += 1;
      saturated += 1;
    }
  }
  const on = bins.map((n) => saturated > 0 && n / saturated >= minShare);
  if (on.every(Boolean)) return 1;
  let clusters = 0;
  for (let i = 0; i < 36; i++) if (on[i] && !on[(i + 35) % 36]) clusters += 1;
  return clusters;
}

/** A fake OpenAI-compatible provider on 127.0.0.1 answering every request with `answer`
 * (a text, or a function of the request body giving the text: a scripted model or judge);
 * resolves with { baseUrl, requests, preflights, close }. It sends CORS headers, so a page
 * can call it directly. */
export async function fakeProvider(answer) {
  const reply = typeof answer === "function" ? answer : () => answer;
  const requests = [];
  // `provider.pieceDelayMs` spaces the pieces of a streamed answer; `provider.closed` counts
  // streams whose client went away before the end.
  const provider = { requests, pieceDelayMs: 20, closed: 0 };
  // CORS, as the real providers answer it: a page may call the fake straight from the
  // browser (a user's own key). Preflights are answered and counted apart from requests.
  provider.preflights = 0;
  const server = http.createServer((req, res) => {
    res.setHeader("access-control-allow-origin", "*");
    if (req.method === "OPTIONS") {
      provider.preflights += 1;
      res.writeHead(204, {
        "access-control-allow-methods": "POST",
        "access-control-allow-headers": req.headers["access-control-request-headers"] ?? "",
        "access-control-max-age": "600",
      }).end();
      return;
    }
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", async () => {
      requests.push({ url: req.url, headers: req.headers, body });
      const usage = { prompt_tokens: 1200, completion_tokens: 300 };
      const parsed = JSON.parse(body);
      const answer = reply(parsed, body);
      // An object answers with tool calls (OpenAI's function calling): {content?, tool_calls}.
      if (typeof answer === "object" && answer !== null) {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: answer.content ?? null, tool_calls: answer.tool_calls } }], usage }));
        return;
      }
      if (!parsed.stream) {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: answer } }], usage }));
        return;
      }
      // An OpenAI-style event stream, eight characters per event.
      res.setHeader("content-type", "text/event-stream");
      let gone = false;
      res.on("close", () => { if (!res.writableFinished) { gone = true; provider.closed += 1; } });
      for (let i = 0; i < answer.length && !gone; i += 8) {
        res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: answer.slice(i, i + 8) } }] })}\n\n`);
        await new Promise((r) => setTimeout(r, provider.pieceDelayMs));
      }
      if (gone) return;
      res.write(`data: ${JSON.stringify({ choices: [], usage })}\n\n`);
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  provider.baseUrl = `http://127.0.0.1:${port}/v1`;
  provider.close = () => { server.closeAllConnections(); return new Promise((r) => server.close(r)); };
  return provider;
}

/**
 * Registers the usual before/after hooks of a playground test file: a fresh server and
 * browser, the page opened with its first structure drawn. Returns `{ server, browser,
 * check }`, filled in once the hooks have run; `check(name, fn)` saves a screenshot when
 * `fn` fails.
 */
export function usePlayground() {
  const session = { server: null, browser: null };
  before(async () => {
    session.server = await startServer();
    session.browser = await launchBrowser();
    await session.browser.page.goto(session.server.url + "/");
    await session.browser.page.waitForSelector("ul.legend[data-for=viewer] li");
  });
  after(async () => {
    await session.browser?.close();
    await session.server?.stop();
  });
  session.check = (name, fn) => withScreenshot(session.browser.page, name, fn);
  return session;
}

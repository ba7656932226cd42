// A first start: scripts/run.sh serves the built page with scripts/serve-page.py while the
// server still compiles, then swaps the server in on the same address. The person sees a
// working playground at once and, without reloading, the server's models once it is up.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { startServer, launchBrowser, withScreenshot, repoRoot } from "../harness.mjs";

let browser;
let bridge;
let server;

/** A loopback port nobody listens on now. */
async function freePort() {
  const probe = net.createServer();
  await new Promise((r) => probe.listen(0, "127.0.0.1", r));
  const { port } = probe.address();
  await new Promise((r) => probe.close(r));
  return port;
}

/** Starts scripts/serve-page.py on `addr`; resolves once it answers. */
async function startBridge(addr) {
  const dist = process.env.ATOMWORLD_DIST ?? path.join(repoRoot, "dist");
  const child = spawn("python3", [path.join(repoRoot, "scripts/serve-page.py"), "--dist", dist, "--addr", addr], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  child.stderr.on("data", (d) => (log += d));
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`serve-page.py exited with ${child.exitCode}:\n${log}`);
    const up = await fetch(`http://${addr}/`).then((r) => r.ok, () => false);
    if (up) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error(`serve-page.py did not answer in 10 s:\n${log}`);
}

before(async () => {
  browser = await launchBrowser();
});

after(async () => {
  bridge?.kill();
  await browser?.close();
  await server?.stop();
});

test("first start: the page works while the server builds, and picks the server up when it comes", () =>
  withScreenshot(browser.page, "first start", async () => {
    const page = browser.page;
    const addr = `127.0.0.1:${await freePort()}`;
    bridge = await startBridge(addr);

    await page.goto(`http://${addr}/`);
    await page.waitForSelector("ul.legend[data-for=viewer] li");
    await page.waitForFunction(() => document.querySelector("#server-status")?.textContent.includes("not there yet"));
    assert.match(await page.locator("#server-status").textContent(), /still being built/);
    await page.waitForFunction(() => document.querySelector("#ask-status")?.textContent.includes("No server"));
    await page.click("#paste-truth");
    await page.waitForSelector("#verdict[data-label=Success]");
    const answer = await page.inputValue("#answer");

    // run.sh stops the bridge and starts the server on the same address.
    const exited = new Promise((r) => bridge.on("exit", r));
    bridge.kill();
    await exited;
    server = await startServer({
      addr,
      configToml: `[[models]]\nname = "arrived-gpt"\nprovider = "openai-compatible"\nmodel = "a"\nbase_url = "http://127.0.0.1:9/v1"\n`,
    });
    await page.waitForFunction(() => document.querySelector("#server-status")?.textContent.startsWith("Server: ok"), null, {
      timeout: 15_000,
    });
    await page.waitForSelector("#model-select option[value=arrived-gpt]", { state: "attached" });
    // Nothing on the page was reset by the server's arrival.
    assert.equal(await page.inputValue("#answer"), answer);
    assert.equal(await page.locator("#verdict").getAttribute("data-label"), "Success");
  }));

// The app on a static host (no atomworld server): everything that needs no model works, and
// the parts that do say so plainly.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { launchBrowser, withScreenshot, fakeProvider } from "../harness.mjs";

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm", ".css": "text/css", ".png": "image/png", ".webp": "image/webp", ".svg": "image/svg+xml" };
let server;
let url;
let browser;

before(async () => {
  const dist = process.env.ATOMWORLD_DIST;
  // A plain file server: files from dist, index.html for other paths, 404 under /api.
  server = http.createServer(async (req, res) => {
    const p = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (p.startsWith("/api/")) {
      res.writeHead(404).end("not found");
      return;
    }
    const file = path.join(dist, path.normalize(p).replace(/^(\.\.[/\\])+/, ""));
    try {
      const body = await readFile(file);
      res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" }).end(body);
    } catch {
      res.writeHead(200, { "content-type": "text/html" }).end(await readFile(path.join(dist, "index.html")));
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${server.address().port}`;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
});

test("without a server: tasks, verdicts and probes work; models and runs say they need one", () =>
  withScreenshot(browser.page, "static host", async () => {
    const page = browser.page;
    await page.goto(url + "/");
    await page.waitForSelector("ul.legend[data-for=viewer] li");
    await page.waitForFunction(() => document.querySelector("#server-status")?.textContent.includes("not available"));
    assert.match(await page.locator("#server-status").textContent(), /Everything that needs no model still works/);
    await page.waitForFunction(() => document.querySelector("#ask-status")?.textContent.includes("No server"));
    await page.click("#paste-truth");
    await page.waitForSelector("#verdict");
    assert.equal(await page.locator("#verdict").getAttribute("data-label"), "Success");

    await page.goto(url + "/probes");
    await page.waitForSelector("#probe-prompt");
    await page.click("#paste-truth");
    await page.waitForSelector("#verdict");
    assert.equal(await page.locator("#verdict").getAttribute("data-label"), "Success");

    await page.goto(url + "/runs");
    await page.waitForFunction(() => document.querySelector("#run-model")?.textContent.includes("no server"));
  }));

test("without a server: a model asked with your own key answers straight to the page", async () => {
  let answer = "";
  const provider = await fakeProvider(() => answer);
  try {
    await withScreenshot(browser.page, "static host own key", async () => {
      const page = browser.page;
      await page.goto(url + "/");
      await page.waitForSelector("ul.legend[data-for=viewer] li");
      await page.click("#paste-truth");
      await page.waitForSelector("#verdict[data-label=Success]");
      answer = await page.inputValue("#answer");
      await page.click('button:text-is("Clear")');
      await page.click("#own-key summary");
      await page.selectOption("#own-provider", "openai-compatible");
      await page.fill("#own-base-url", provider.baseUrl);
      await page.fill("#own-model", "static-own");
      await page.fill("#own-key-input", "sk-static-test-key");
      await page.click("#own-use");
      await page.click("#ask-model");
      await page.waitForSelector("#verdict[data-label=Success]");
      assert.equal(provider.requests.length, 1);
      assert.equal(provider.requests[0].headers.authorization, "Bearer sk-static-test-key");
    });
  } finally {
    await provider.close();
  }
});

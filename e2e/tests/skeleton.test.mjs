// The first page: structure drawn with WebGL2, orbit by drag, server health shown.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { startServer, launchBrowser, withScreenshot, canvasPixels, hueClusters, repoRoot } from "../harness.mjs";

const BACKGROUND = [250, 250, 252];
let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await browser.page.goto(server.url + "/");
  await browser.page.waitForSelector("ul.legend[data-for=viewer] li");
  // The viewer renders once on load; give it a frame to finish.
  await browser.page.waitForTimeout(300);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});


const check = (name, fn) => withScreenshot(browser.page, name, fn);

function nonBackground(px) {
  let n = 0;
  for (let i = 0; i < px.data.length; i += 4) {
    const dr = Math.abs(px.data[i] - BACKGROUND[0]);
    const dg = Math.abs(px.data[i + 1] - BACKGROUND[1]);
    const db = Math.abs(px.data[i + 2] - BACKGROUND[2]);
    if (dr + dg + db > 30) n += 1;
  }
  return n;
}

test("page loads without console errors", () =>
  check("console errors", async () => {
    assert.deepEqual(browser.consoleErrors, []);
  }));

test("WebGL2 is available", () =>
  check("webgl2", async () => {
    const ok = await browser.page.evaluate(() => !!document.createElement("canvas").getContext("webgl2"));
    assert.equal(ok, true);
    assert.equal(await browser.page.locator(".viewer-error").count(), 0);
  }));

test("canvas shows the structure with one colour per element", () =>
  check("canvas colours", async () => {
    const elements = await browser.page.locator("ul.legend[data-for=viewer] li").evaluateAll((lis) => lis.map((li) => li.dataset.element));
    assert.deepEqual([...elements].sort(), ["Cl", "Na"]);
    // An action that touches no site, so that no highlight halo adds a colour.
    await browser.page.fill(
      "#action-prompt",
      "Rotate all surrounding atoms within 0.0001 angstrom of the center atom at index 0 by 90 degree around the axis [0. 0. 1.] in the cif file.",
    );
    await browser.page.waitForTimeout(200);
    const px = await canvasPixels(browser.page);
    const total = px.width * px.height;
    const drawn = nonBackground(px);
    assert.ok(drawn > total * 0.015, `only ${drawn} of ${total} pixels differ from the background`);
    assert.equal(hueClusters(px), elements.length);
  }));

test("dragging rotates the picture", () =>
  check("drag", async () => {
    const before = await canvasPixels(browser.page);
    const box = await browser.page.locator("#viewer").boundingBox();
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    await browser.page.mouse.move(cx, cy);
    await browser.page.mouse.down();
    await browser.page.mouse.move(cx + 120, cy + 40, { steps: 8 });
    await browser.page.mouse.up();
    await browser.page.waitForTimeout(100);
    const after = await canvasPixels(browser.page);
    let changed = 0;
    for (let i = 0; i < before.data.length; i += 4) {
      if (before.data[i] !== after.data[i] || before.data[i + 1] !== after.data[i + 1]) changed += 1;
    }
    assert.ok(changed > before.data.length / 4 / 100, `only ${changed} pixels changed after a drag`);
    assert.ok(nonBackground(after) > 0);
  }));

test("status line shows the server's version", () =>
  check("health", async () => {
    const cargo = readFileSync(path.join(repoRoot, "Cargo.toml"), "utf8");
    const version = /\[workspace\.package\][^[]*?version\s*=\s*"([^"]+)"/.exec(cargo)[1];
    const health = await (await fetch(server.url + "/api/health")).json();
    assert.equal(health.version, version);
    const status = browser.page.locator("#server-status");
    await status.getByText(`version ${version}`).waitFor({ timeout: 10_000 });
    assert.match(await status.textContent(), /Server: ok/);
  }));

// A first visit says in one line what to do; "Got it" dismisses it for good (this browser).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, withScreenshot } from "../harness.mjs";

let server;
let browser;
before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test("the first-visit line is shown once and stays dismissed after a reload", () =>
  withScreenshot(browser.page, "first visit", async () => {
    const page = browser.page;
    await page.goto(server.url + "/");
    await page.waitForSelector("#first-visit");
    assert.match(await page.locator("#first-visit").textContent(), /paste a model's answer/);
    await page.click("#first-visit-dismiss");
    assert.equal(await page.locator("#first-visit").count(), 0);
    await page.reload();
    await page.waitForSelector("#viewer");
    assert.equal(await page.locator("#first-visit").count(), 0, "still dismissed");
  }));

test("while the module loads, the first screen shows the title and the first structure's picture", async () => {
  // A browser whose module never arrives shows what a slow network shows meanwhile (its
  // console then reports the refused module: not this test's concern).
  const blocked = await launchBrowser();
  let caption;
  try {
    const page = blocked.page;
    await page.route(/\.wasm$/, (route) => route.abort());
    await page.goto(server.url + "/");
    await page.waitForFunction(() => document.querySelector("#first-picture img")?.complete);
    assert.match(await page.locator("#first-screen h1").textContent(), /AtomWorld Playground/);
    assert.ok(await page.locator("#first-picture img").evaluate((img) => img.naturalWidth > 100));
    caption = (await page.locator("#first-picture figcaption").textContent()).trim();
    // Other pages and shared links show the title only.
    for (const where of ["/runs", "/#c=anything"]) {
      await page.goto(server.url + where);
      await page.waitForSelector("#first-screen h1");
      assert.equal(await page.locator("#first-picture").count(), 0, where);
    }
  } finally {
    await blocked.close();
  }
  // The app replaces the first screen, and its first structure is the one pictured.
  await withScreenshot(browser.page, "first screen replaced", async () => {
    const page = browser.page;
    await page.goto(server.url + "/");
    await page.waitForSelector("ul.legend[data-for=viewer] li");
    assert.equal(await page.locator("#first-screen").count(), 0);
    assert.equal((await page.locator("#input-name").textContent()).trim(), caption);
  });
});

test("before the app's module arrives, the first view draws the first structure in 3D and a drag turns it", async () => {
  // The app's module never arrives; the first view's does.
  const slow = await launchBrowser();
  try {
    const page = slow.page;
    await page.route(/\/app-[^/]*_bg\.wasm$/, (route) => route.abort());
    await page.goto(server.url + "/");
    const canvas = page.locator("#first-picture canvas");
    await page.waitForSelector("#first-picture canvas[data-atoms]");
    assert.equal(await canvas.getAttribute("data-atoms"), "12", "Halite 1×2×3 has 12 sites");
    assert.equal(await page.locator("#first-picture img").count(), 0, "the canvas took the picture's place");
    assert.equal(await page.locator("#viewer").count(), 0, "the app has not started");
    const box = await canvas.boundingBox();
    // The picture's place: 307 × 418 and its 1 px border.
    assert.ok(Math.abs(box.width - 309) <= 1 && Math.abs(box.height - 420) <= 1, JSON.stringify(box));
    // What the canvas shows: its pixels that are not the viewer's background.
    const pixels = () =>
      canvas.evaluate((c) => {
        const gl = c.getContext("webgl2");
        const px = new Uint8Array(gl.drawingBufferWidth * gl.drawingBufferHeight * 4);
        gl.readPixels(0, 0, gl.drawingBufferWidth, gl.drawingBufferHeight, gl.RGBA, gl.UNSIGNED_BYTE, px);
        const drawn = [];
        for (let i = 0; i < px.length; i += 4) {
          const background = px[i] === 250 && px[i + 1] === 250 && px[i + 2] === 252;
          if (!background) drawn.push(i / 4);
        }
        // Sodium's and chlorine's Jmol colours (violet, green) both appear.
        let violet = 0;
        let green = 0;
        for (let i = 0; i < px.length; i += 4) {
          const [r, g, b] = [px[i], px[i + 1], px[i + 2]];
          if (b > 150 && r > 100 && g < 110) violet++;
          if (g > 150 && r < 100 && b < 100) green++;
        }
        return { total: px.length / 4, drawn, violet, green };
      });
    const before = await pixels();
    assert.ok(before.drawn.length > 0.03 * before.total, `${before.drawn.length} of ${before.total} pixels drawn`);
    assert.ok(before.violet > 100 && before.green > 100, `violet ${before.violet}, green ${before.green}`);
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 + 80, box.y + box.height / 2 + 20, { steps: 4 });
    await page.mouse.up();
    const after = await pixels();
    const same = after.drawn.length === before.drawn.length && after.drawn.every((p, i) => p === before.drawn[i]);
    assert.ok(!same, "the drag turned the structure");
    assert.ok(after.drawn.length > 0.03 * after.total, "still drawn after the drag");
  } finally {
    await slow.close();
  }
});

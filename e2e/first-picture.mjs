// Draws the picture index.html shows while the app's module loads: the playground's viewer
// with its first structure, as a first visit sees it (1100×800 window, software WebGL), into
// public/static/first-picture.webp (lossy at quality 0.9: 10 kB where the PNG was 24 kB, and
// alike to the eye; WebP because chromium encodes it, and every browser the app runs in
// decodes it). Not a test; run it when the viewer's look or the first
// structure changes (first_visit.test.mjs fails when the caption no longer names it):
//   ATOMWORLD_BIN=… ATOMWORLD_DIST=… node e2e/first-picture.mjs
import path from "node:path";
import { writeFileSync } from "node:fs";
import { startServer, launchBrowser, repoRoot } from "./harness.mjs";

const server = await startServer();
const browser = await launchBrowser();
try {
  const page = browser.page;
  await page.goto(server.url + "/");
  await page.waitForSelector("ul.legend[data-for=viewer] li");
  await page.waitForTimeout(1000);
  const out = path.join(repoRoot, "public", "static", "first-picture.webp");
  const png = (await page.locator("#viewer").screenshot()).toString("base64");
  const webp = await page.evaluate(async (png) => {
    const img = new Image();
    img.src = "data:image/png;base64," + png;
    await img.decode();
    const canvas = document.createElement("canvas");
    [canvas.width, canvas.height] = [img.width, img.height];
    canvas.getContext("2d").drawImage(img, 0, 0);
    return canvas.toDataURL("image/webp", 0.9).split(",")[1];
  }, png);
  writeFileSync(out, Buffer.from(webp, "base64"));
  const box = await page.locator("#viewer").boundingBox();
  console.log(`wrote ${out}: ${Math.round(box.width)}×${Math.round(box.height)} px of "${await page.locator("#input-name").textContent()}"`);
} finally {
  await browser.close();
  await server.stop();
}

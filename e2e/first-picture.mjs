// Draws the picture index.html shows while the app's module loads: the playground's viewer
// with its first structure, as a first visit sees it (1100×800 window, software WebGL), into
// public/static/first-picture.png. Not a test; run it when the viewer's look or the first
// structure changes (first_visit.test.mjs fails when the caption no longer names it):
//   ATOMWORLD_BIN=… ATOMWORLD_DIST=… node e2e/first-picture.mjs
import path from "node:path";
import { startServer, launchBrowser, repoRoot } from "./harness.mjs";

const server = await startServer();
const browser = await launchBrowser();
try {
  const page = browser.page;
  await page.goto(server.url + "/");
  await page.waitForSelector("ul.legend[data-for=viewer] li");
  await page.waitForTimeout(1000);
  const out = path.join(repoRoot, "public", "static", "first-picture.png");
  await page.locator("#viewer").screenshot({ path: out });
  const box = await page.locator("#viewer").boundingBox();
  console.log(`wrote ${out}: ${Math.round(box.width)}×${Math.round(box.height)} px of "${await page.locator("#input-name").textContent()}"`);
} finally {
  await browser.close();
  await server.stop();
}

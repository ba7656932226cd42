// Picking in the viewer: a click on a site shows its index, element and coordinates; a
// second click shows the distance the engine computes (minimum image).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { usePlayground } from "../harness.mjs";

const session = usePlayground();
const check = session.check;

// CsCl: Cs at the corner, Cl at the body centre of a 4.12 Å cube.
const POSCAR = "CsCl\n1.0\n4.12 0 0\n0 4.12 0\n0 0 4.12\nCs Cl\n1 1\nDirect\n0 0 0\n0.5 0.5 0.5\n";

async function clickSite(page, i) {
  const canvas = page.locator("#viewer");
  const sites = JSON.parse(await canvas.getAttribute("data-sites"));
  const [x, y] = sites[i];
  await canvas.click({ position: { x, y } });
}

test("clicking two sites shows their coordinates and their distance", () =>
  check("picking", async () => {
    const page = session.browser.page;
    await page.locator("details.paste summary").click();
    await page.fill("#cif-paste", POSCAR);
    await page.click("#use-pasted");
    await page.waitForFunction(() => document.querySelector("#input-name").textContent.includes("POSCAR"));
    await page.waitForFunction(() => JSON.parse(document.querySelector("#viewer").dataset.sites || "[]").length === 2);

    await clickSite(page, 1);
    const first = page.locator("ul.picked[data-for=viewer] li[data-site='1']");
    await first.waitFor();
    assert.match(await first.textContent(), /^#1 Cl frac \(0\.5000, 0\.5000, 0\.5000\) · Cartesian \(2\.0600, 2\.0600, 2\.0600\) Å$/);

    await clickSite(page, 0);
    const distance = page.locator("ul.picked[data-for=viewer] .distance .value");
    await distance.waitFor();
    // √3/2 · 4.12 Å, the Cs–Cl bond of CsCl.
    assert.equal(await distance.textContent(), (Math.sqrt(3) / 2 * 4.12).toFixed(4));

    // A click on empty background clears the selection.
    await page.locator("#viewer").click({ position: { x: 3, y: 3 } });
    await page.waitForFunction(() => !document.querySelector("ul.picked[data-for=viewer]"));
  }));

test("site indices can be shown over the atoms they name", () =>
  check("labels", async () => {
    const page = session.browser.page;
    const labels = page.locator(".site-labels[data-for=viewer] .site-label");
    assert.equal(await labels.count(), 0, "labels start hidden");
    await page.check("input.labels-toggle[data-for=viewer]");
    await page.waitForFunction(() => document.querySelectorAll(".site-labels[data-for=viewer] .site-label").length === 2);
    assert.deepEqual(await labels.allTextContents(), ["0", "1"]);
    // Each label sits on its site's drawn centre.
    const canvas = page.locator("#viewer");
    const sites = JSON.parse(await canvas.getAttribute("data-sites"));
    const box = await canvas.boundingBox();
    for (let i = 0; i < 2; i += 1) {
      const b = await labels.nth(i).boundingBox();
      const [cx, cy] = [b.x + b.width / 2 - box.x, b.y + b.height / 2 - box.y];
      assert.ok(Math.abs(cx - sites[i][0]) < 3 && Math.abs(cy - sites[i][1]) < 3, `label ${i} at ${cx},${cy} vs ${sites[i]}`);
    }
    await page.uncheck("input.labels-toggle[data-for=viewer]");
    await page.waitForFunction(() => document.querySelectorAll(".site-labels[data-for=viewer] .site-label").length === 0);
  }));

test("axis views look down a lattice vector; the picture saves as PNG", () =>
  check("views and png", async () => {
    const page = session.browser.page;
    const canvas = page.locator("#viewer");
    const sitesNow = async () => JSON.parse(await canvas.getAttribute("data-sites"));
    const before = await sitesNow();
    await page.click(".view-tools[data-for=viewer] button[data-view=a]");
    await page.waitForFunction(
      (b) => document.querySelector("#viewer").dataset.sites !== b,
      JSON.stringify(before),
    );
    // Looking down a at the cell centre, the body-centre Cl sits in the middle of the canvas.
    const box = await canvas.boundingBox();
    const [x, y] = (await sitesNow())[1];
    const [w, h] = [box.width - 2, box.height - 2]; // the canvas has a 1 px border
    assert.ok(Math.abs(x - w / 2) < 2 && Math.abs(y - h / 2) < 2, `Cl at ${x},${y}; canvas ${w}x${h}`);
    await page.click(".view-tools[data-for=viewer] button[data-view=reset]");
    await page.waitForFunction(
      (b) => JSON.parse(document.querySelector("#viewer").dataset.sites)
        .every(([x, y], i) => Math.abs(x - b[i][0]) < 0.5 && Math.abs(y - b[i][1]) < 0.5),
      before,
    );

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.click('.view-tools[data-for=viewer] a[data-format="PNG"]'),
    ]);
    assert.equal(download.suggestedFilename(), "viewer.png");
    const png = readFileSync(await download.path());
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.ok(png.length > 2000, `a real picture, not an empty canvas (${png.length} bytes)`);
  }));

test("an atom moved out of a small cell stays in the target's view, also after reset", () =>
  check("moved out of view", async () => {
    const page = session.browser.page;
    await page.locator("details.paste").evaluate((d) => (d.open = true));
    await page.fill("#cif-paste", POSCAR);
    await page.click("#use-pasted");
    await page.waitForFunction(() => document.querySelector("#input-name").textContent.includes("POSCAR"));
    // Cl leaves the 4.12 Å cube by 6 Å along z: 6 Å from the cell's centre, where the
    // cell's own corners are 3.6 Å away.
    await page.fill("#action-prompt", "Move the atom at index 1 by [0 0 6] angstrom in the cif file.");
    const canvas = page.locator("#viewer-target");
    await page.waitForFunction(() => {
      const s = JSON.parse(document.querySelector("#viewer-target")?.dataset.sites || "[]");
      return s.length === 2;
    });
    const inside = async () => {
      const box = await canvas.boundingBox();
      const sites = JSON.parse(await canvas.getAttribute("data-sites"));
      // Each site's centre at least 20 px inside the edges: the atom is drawn whole.
      return sites.every(([x, y]) => x >= 20 && y >= 20 && x <= box.width - 20 && y <= box.height - 20)
        ? true
        : JSON.stringify({ sites, w: box.width, h: box.height });
    };
    await page.waitForFunction(() => {
      const s = JSON.parse(document.querySelector("#viewer-target").dataset.sites);
      return Math.abs(s[1][1] - s[0][1]) > 1;
    });
    assert.equal(await inside(), true);
    // Turn it away, then reset: the view frames both again.
    const box = await canvas.boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 + 150, box.y + box.height / 2 + 90, { steps: 6 });
    await page.mouse.up();
    await page.click(".view-tools[data-for=viewer-target] button[data-view=reset]");
    await page.waitForTimeout(100);
    assert.equal(await inside(), true);
  }));

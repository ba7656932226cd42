// The viewer's tools: bonds, Jmol/VESTA colours, keyboard shortcuts and their help overlay,
// angle measurement, and hand edits of the input with undo/redo.
import { test } from "node:test";
import assert from "node:assert/strict";
import { usePlayground } from "../harness.mjs";

const session = usePlayground();
const check = session.check;

// CsCl (a = 4.12 Å). Bonding rule d ≤ r₁ + r₂ + 0.45 Å with covalent radii Cs 2.44, Cl 1.02:
// Cs–Cl 3.568 Å ≤ 3.91 (8 bonds), Cs–Cs 4.12 Å ≤ 5.33 (6 neighbours, 3 bonds), Cl–Cl 4.12 Å > 2.49.
const CSCL = "CsCl\n1.0\n4.12 0 0\n0 4.12 0\n0 0 4.12\nCs Cl\n1 1\nDirect\n0 0 0\n0.5 0.5 0.5\n";
// A water molecule in a 10 Å box: O–H 0.9572 Å, H–O–H 104.52°.
const t = (104.52 * Math.PI) / 180;
const WATER = `water\n1.0\n10 0 0\n0 10 0\n0 0 10\nO H\n1 2\nCartesian\n5 5 5\n${5 + 0.9572} 5 5\n${5 + 0.9572 * Math.cos(t)} ${5 + 0.9572 * Math.sin(t)} 5\n`;

async function paste(page, text, sites) {
  await page.evaluate(() => { document.querySelector("details.paste").open = true; });
  await page.fill("#cif-paste", text);
  await page.click("#use-pasted");
  await page.waitForFunction((n) => JSON.parse(document.querySelector("#viewer").dataset.sites || "[]").length === n, sites);
}

async function clickSite(page, i) {
  const canvas = page.locator("#viewer");
  const [x, y] = JSON.parse(await canvas.getAttribute("data-sites"))[i];
  await canvas.click({ position: { x, y } });
}

const pixels = (page) => page.locator("#viewer").screenshot();
const bonds = (page) => page.locator("#viewer").getAttribute("data-bonds");
const swatch = (page, el) => page.locator(`ul.legend[data-for=viewer] li[data-element=${el}] .swatch`).evaluate((e) => getComputedStyle(e).backgroundColor);

test("bonds follow the bonding rule and toggle; colours switch to VESTA; ? lists the shortcuts", () =>
  check("bonds and colours", async () => {
    const page = session.browser.page;
    await paste(page, CSCL, 2);
    assert.equal(await bonds(page), "11");
    const withBonds = await pixels(page);
    await page.locator("#viewer").focus();
    await page.keyboard.press("o");
    await page.waitForFunction(() => document.querySelector("#viewer").dataset.bonds === "0");
    assert.equal(await page.isChecked("input.bonds-toggle[data-for=viewer]"), false);
    assert.notDeepEqual(await pixels(page), withBonds, "bonds leave the picture");
    await page.check("input.bonds-toggle[data-for=viewer]");
    await page.waitForFunction(() => document.querySelector("#viewer").dataset.bonds === "11");

    // pymatgen's VESTA table gives Cs its Jmol colour; Cl differs (49,252,2 vs 31,240,31).
    const jmol = await swatch(page, "Cl");
    const before = await pixels(page);
    await page.selectOption("select.scheme-select[data-for=viewer]", "VESTA");
    await page.waitForFunction((c) => getComputedStyle(document.querySelector("ul.legend[data-for=viewer] li[data-element=Cl] .swatch")).backgroundColor !== c, jmol);
    assert.notDeepEqual(await pixels(page), before, "the atoms change colour");
    await page.locator("#viewer").focus();
    await page.keyboard.press("v");
    await page.waitForFunction((c) => getComputedStyle(document.querySelector("ul.legend[data-for=viewer] li[data-element=Cl] .swatch")).backgroundColor === c, jmol);

    await page.keyboard.press("?");
    const help = page.locator(".help-overlay");
    await help.waitFor();
    assert.match(await help.textContent(), /Jmol \/ VESTA colours/);
    assert.match(await help.textContent(), /undo \/ redo/);
    await page.keyboard.press("?");
    await help.waitFor({ state: "detached" });
  }));

test("three picked sites show both distances and the angle at the middle one", () =>
  check("angle", async () => {
    const page = session.browser.page;
    await paste(page, WATER, 3);
    await clickSite(page, 1);
    await clickSite(page, 0);
    await clickSite(page, 2);
    const angle = page.locator("ul.picked[data-for=viewer] .angle .value");
    await angle.waitFor();
    assert.equal(await angle.textContent(), "104.52");
    assert.deepEqual(await page.locator("ul.picked[data-for=viewer] .distance .value").allTextContents(), ["0.9572", "0.9572"]);
    await page.keyboard.press("Escape");
    await page.waitForFunction(() => !document.querySelector("ul.picked[data-for=viewer]"));
  }));

test("hand edits change the input; undo and redo walk the history; bad input is explained", () =>
  check("hand edits", async () => {
    const page = session.browser.page;
    await paste(page, WATER, 3);
    const prompt = await page.inputValue("#action-prompt");
    const legend = () => page.locator("ul.legend[data-for=viewer] li").evaluateAll((ls) => ls.map((l) => l.dataset.element).join(" "));

    await clickSite(page, 0);
    await page.fill(".edit-tools[data-for=viewer] .edit-element", "S");
    await page.click(".edit-tools[data-for=viewer] [data-edit=change]");
    await page.waitForFunction(() => document.querySelector("#input-name").textContent.includes("edited by hand (3 sites)"));
    await page.waitForFunction(() => [...document.querySelectorAll("ul.legend[data-for=viewer] li")].some((l) => l.dataset.element === "S"));
    assert.equal(await legend(), "S H");
    assert.equal(await page.inputValue("#action-prompt"), prompt, "the task's prompt is kept");

    await clickSite(page, 2);
    await page.keyboard.press("Delete");
    await page.waitForFunction(() => JSON.parse(document.querySelector("#viewer").dataset.sites).length === 2);

    await page.locator("#viewer").focus();
    await page.keyboard.press("Control+z");
    await page.waitForFunction(() => JSON.parse(document.querySelector("#viewer").dataset.sites).length === 3);
    await page.keyboard.press("Control+z");
    await page.waitForFunction(() => [...document.querySelectorAll("ul.legend[data-for=viewer] li")].some((l) => l.dataset.element === "O"));
    assert.match(await page.locator("#input-name").textContent(), /pasted POSCAR/);
    await page.keyboard.press("Control+y");
    await page.waitForFunction(() => [...document.querySelectorAll("ul.legend[data-for=viewer] li")].some((l) => l.dataset.element === "S"));

    await page.fill(".edit-tools[data-for=viewer] .edit-element", "N");
    await page.fill(".edit-tools[data-for=viewer] .edit-vector", "1 2");
    await page.click(".edit-tools[data-for=viewer] [data-edit=add]");
    assert.match(await page.locator(".edit-tools[data-for=viewer] .edit-error").textContent(), /three numbers, got 2/);
    await page.fill(".edit-tools[data-for=viewer] .edit-vector", "1, 1, 1");
    await page.click(".edit-tools[data-for=viewer] [data-edit=add]");
    await page.waitForFunction(() => JSON.parse(document.querySelector("#viewer").dataset.sites).length === 4);
    assert.equal(await legend(), "S H N");
    // A move needs a picked site.
    await page.click(".edit-tools[data-for=viewer] [data-edit=move]");
    assert.match(await page.locator(".edit-tools[data-for=viewer] .edit-error").textContent(), /pick a site first/);
  }));

test("periodic images: 2×2×2 cells draw eight copies; picking still names the cell's own sites", () =>
  check("images", async () => {
    const page = session.browser.page;
    await paste(page, CSCL, 2);
    const before = await pixels(page);
    await page.selectOption("select.cells-select[data-for=viewer]", "2");
    await page.waitForFunction(() => document.querySelector("#viewer").dataset.atoms === "16");
    // The supercell's bonds: eight cells of the 11 above.
    assert.equal(await bonds(page), "88");
    assert.notDeepEqual(await pixels(page), before);
    assert.equal(JSON.parse(await page.locator("#viewer").getAttribute("data-sites")).length, 2);
    // Whatever copy is hit (an image may sit in front of the cell's own site), the pick
    // names one of the cell's two sites.
    await clickSite(page, 1);
    const picked = page.locator("ul.picked[data-for=viewer] li[data-site]");
    await picked.first().waitFor();
    assert.ok(["0", "1"].includes(await picked.first().getAttribute("data-site")));
    await page.selectOption("select.cells-select[data-for=viewer]", "1");
    await page.waitForFunction(() => document.querySelector("#viewer").dataset.atoms === "2");
  }));

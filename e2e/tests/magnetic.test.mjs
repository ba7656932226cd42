// A magnetic CIF pasted into the playground: read as pymatgen reads it (every site of the
// magnetic cell), each site's moment drawn as an arrow (issue 23, gap 2).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { usePlayground } from "../harness.mjs";

const session = usePlayground();
const check = session.check;

// NiO's antiferromagnetic cell from pymatgen's test files (data/cif-corpus/SOURCES.tsv):
// pymatgen reads 64 sites, 32 Ni with a moment and 32 O without.
const NIO = readFileSync(new URL("../../data/cif-corpus/pymatgen/magnetic.example.NiO.mcif", import.meta.url), "utf8");

test("a pasted magnetic CIF shows its sites and one arrow per magnetic moment", () =>
  check("magnetic CIF", async () => {
    const page = session.browser.page;
    await page.locator("details.paste summary").click();
    await page.fill("#cif-paste", NIO);
    await page.click("#use-pasted");
    await page.waitForFunction(() => /64 sites/.test(document.querySelector("#input-name")?.textContent ?? ""));
    await page.waitForFunction(() => document.querySelector("#viewer")?.dataset.moments === "32");
    assert.equal(await page.locator("#viewer").getAttribute("data-atoms"), "64");
    // An ordinary structure draws no arrows.
    if (!(await page.locator("#cif-paste").isVisible())) await page.locator("details.paste summary").click();
    await page.fill("#cif-paste", "CsCl\n1.0\n4.12 0 0\n0 4.12 0\n0 0 4.12\nCs Cl\n1 1\nDirect\n0 0 0\n0.5 0.5 0.5\n");
    await page.click("#use-pasted");
    await page.waitForFunction(() => document.querySelector("#viewer")?.dataset.atoms === "2");
    assert.equal(await page.locator("#viewer").getAttribute("data-moments"), "0");
  }));

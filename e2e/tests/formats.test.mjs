// Structure files in and out of the playground: POSCAR / XYZ / pymatgen JSON pasted or
// dropped, errors with line and column, downloads in every format, the space group.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { usePlayground } from "../harness.mjs";

const session = usePlayground();
const check = session.check;

const POSCAR = "CsCl\n1.0\n4.12 0 0\n0 4.12 0\n0 0 4.12\nCs Cl\n1 1\nDirect\n0 0 0\n0.5 0.5 0.5\n";

test("the default structure shows its space group", () =>
  check("space group", async () => {
    const page = session.browser.page;
    await page.waitForFunction(() => document.querySelector("#space-group")?.textContent.includes("(225)"));
    assert.equal(await page.locator("#space-group").textContent(), "F m -3 m (225)");
  }));

test("a pasted POSCAR becomes the input; a broken one says where", () =>
  check("paste poscar", async () => {
    const page = session.browser.page;
    await page.locator("details.paste summary").click();
    await page.fill("#cif-paste", POSCAR);
    await page.click("#use-pasted");
    await page.waitForFunction(() => document.querySelector("#input-name").textContent.includes("POSCAR"));
    assert.equal(await page.locator("#input-name").textContent(), "pasted POSCAR (2 sites)");
    await page.waitForFunction(() => document.querySelector("#space-group").textContent.includes("(221)"));
    const legend = await page.locator("ul.legend[data-for=viewer] li").allTextContents();
    assert.deepEqual(legend.map((t) => t.trim()).sort(), ["Cl", "Cs"]);

    await page.fill("#cif-paste", POSCAR.replace("0 4.12 0", "0 4.12 zero"));
    await page.click("#use-pasted");
    const error = page.locator("#paste-error");
    await error.waitFor();
    assert.equal(await error.textContent(), 'POSCAR, line 4, column 8: lattice vector b: "zero" is not a number');
    // The last good structure stays.
    assert.equal(await page.locator("#input-name").textContent(), "pasted POSCAR (2 sites)");

    // Plain words are no structure file: the page names the formats it reads, not a
    // POSCAR scale factor.
    await page.fill("#cif-paste", "rock salt with one chlorine removed\nplease");
    await page.click("#use-pasted");
    await page.waitForFunction(() => document.querySelector("#paste-error")?.textContent.startsWith("This is not a structure file"));
    const prose = await page.locator("#paste-error").textContent();
    assert.match(prose, /^This is not a structure file the page reads: paste or drop a CIF, a POSCAR or CONTCAR, an extended XYZ or a pymatgen Structure JSON\./);
    assert.equal(await page.locator("#input-name").textContent(), "pasted POSCAR (2 sites)");
  }));

test("a dropped extended XYZ file is read by its name", () =>
  check("drop xyz", async () => {
    const page = session.browser.page;
    const xyz =
      '2\nLattice="3.0 0.0 0.0 0.0 3.0 0.0 0.0 0.0 3.0" Properties=species:S:1:pos:R:3 pbc="T T T"\nFe 0 0 0\nFe 1.5 1.5 1.5\n';
    const dt = await page.evaluateHandle((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], "iron.xyz", { type: "text/plain" }));
      return dt;
    }, xyz);
    await page.dispatchEvent("#cif-paste", "drop", { dataTransfer: dt });
    await page.waitForFunction(() => document.querySelector("#input-name").textContent.includes("XYZ"));
    // A dropped file keeps its name (issue 24, item 8).
    assert.equal(await page.locator("#input-name").textContent(), "iron.xyz (extended XYZ, 2 sites)");
    assert.equal(await page.locator("#space-group").textContent(), "I m -3 m (229)");
  }));

test("the input downloads as CIF and POSCAR that read back the same", () =>
  check("downloads", async () => {
    const page = session.browser.page;
    await page.fill("#cif-paste", POSCAR);
    await page.click("#use-pasted");
    await page.waitForFunction(() => document.querySelector("#input-name").textContent.includes("POSCAR"));
    const download = async (format) => {
      const [d] = await Promise.all([
        page.waitForEvent("download"),
        page.click(`.exports[data-for=input] a[data-format="${format}"]`),
      ]);
      return { name: d.suggestedFilename(), text: readFileSync(await d.path(), "utf8") };
    };
    const poscar = await download("POSCAR");
    assert.equal(poscar.name, "input.vasp");
    // pymatgen's Poscar layout: formula comment, scale 1.0, 16-decimal direct coordinates.
    assert.ok(poscar.text.startsWith("Cs1 Cl1\n1.0\n   4.1200000000000001    0.0000000000000000"), poscar.text);
    assert.ok(poscar.text.includes("\nCs Cl\n1 1\ndirect\n"), poscar.text);
    const cif = await download("CIF");
    assert.equal(cif.name, "input.cif");
    assert.match(cif.text, /_cell_length_a\s+4\.12000000/);
    assert.match(cif.text, /Cl\s+Cl1\s+1\s+0\.50000000\s+0\.50000000\s+0\.50000000\s+1/);
    const json = JSON.parse((await download("pymatgen JSON")).text);
    assert.equal(json["@class"], "Structure");
    assert.deepEqual(json.sites.map((s) => s.species[0].element), ["Cs", "Cl"]);
  }));

test("a CIF naming its space group only by symbol is expanded; an unknown name is read as P1 with a warning", () =>
  check("symmetry warning", async () => {
    const page = session.browser.page;
    const cif = (group) => "data_NaCl\n_cell_length_a 5.64\n_cell_length_b 5.64\n_cell_length_c 5.64\n" +
      "_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\n" +
      `${group}\nloop_\n_atom_site_label\n_atom_site_type_symbol\n` +
      "_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\nNa1 Na 0 0 0\nCl1 Cl 0.5 0.5 0.5\n";
    const paste = async (text) => {
      if (!(await page.locator("#cif-paste").isVisible())) await page.locator("details.paste summary").click();
      await page.fill("#cif-paste", text);
      await page.click("#use-pasted");
    };
    // Rock salt named by its symbol: the whole 8-site cell, no warning.
    await paste(cif("_symmetry_space_group_name_H-M 'F m -3 m'"));
    await page.waitForFunction(() => /\(225\)/.test(document.querySelector("#space-group")?.textContent ?? ""));
    assert.match(await page.locator("#input-name").textContent(), /8 sites/);
    assert.equal(await page.locator("#symmetry-warning").count(), 0);
    // A Hall symbol, which pymatgen does not look up: 2 sites, said plainly.
    await paste(cif("_space_group_name_Hall '-F 4 2 3'"));
    await page.waitForSelector("#symmetry-warning");
    const text = await page.locator("#symmetry-warning").textContent();
    assert.match(text, /-F 4 2 3/);
    assert.match(text, /only its 2 listed sites/);
    // Back to a pool structure: no warning.
    await page.selectOption("#structure-select", { index: 0 });
    await page.waitForFunction(() => !document.querySelector("#symmetry-warning"));
  }));

// Matching off the main thread (issue 24): a 512-site match runs in the matching worker, the
// page says "matching…" meanwhile and still answers a click within 100 ms.
import { test } from "node:test";
import assert from "node:assert/strict";
import { usePlayground } from "../harness.mjs";

const session = usePlayground();
const check = session.check;

const ROCK_SALT = `NaCl conventional cell
1.0
5.64 0 0
0 5.64 0
0 0 5.64
Na Cl
4 4
Direct
0 0 0
0 0.5 0.5
0.5 0 0.5
0.5 0.5 0
0.5 0.5 0.5
0.5 0 0
0 0.5 0
0 0 0.5
`;

/** The answer's CIF with the first atom row's x coordinate moved by `dx` (fractional). */
function perturbFirstSite(answer, dx) {
  const lines = answer.split("\n");
  const loop = lines.findIndex((l) => l.trim() === "_atom_site_occupancy");
  assert.ok(loop > 0, "the answer's CIF has an atom-site loop");
  const fields = lines[loop + 1].trim().split(/\s+/);
  fields[3] = (Number(fields[3]) + dx).toFixed(8);
  lines[loop + 1] = "  " + fields.join("  ");
  return lines.join("\n");
}

test("a 512-site match runs in the worker: 'matching…' is shown and a click is handled within 100 ms", () =>
  check("worker responsiveness", async () => {
    const page = session.browser.page;
    // Rock salt's 8-site conventional cell, pasted, as a 4×4×4 supercell: a 512-site target.
    if (!(await page.locator("#cif-paste").isVisible())) await page.locator("details.paste summary").click();
    await page.fill("#cif-paste", ROCK_SALT);
    await page.click("#use-pasted");
    await page.waitForFunction(() => document.querySelector("#input-name").textContent.includes("POSCAR (8 sites)"));
    await page.selectOption("#action-kind", "super_cell");
    await page.waitForFunction(() => document.querySelector("#action-prompt").value.startsWith("Create a supercell"));
    const size = page.locator("#action-form [data-param=size] input");
    await size.waitFor();
    await size.fill("4, 4, 4");
    await size.dispatchEvent("change");
    await page.waitForFunction(() => /ground truth, 512 sites/.test(document.body.textContent));

    // The ground truth with one atom moved a little: the matcher must search (seconds), not
    // just confirm an identical copy.
    await page.click("#paste-truth");
    const truth = await page.inputValue("#answer");
    await page.fill("#answer", perturbFirstSite(truth, 0.002));
    await page.locator("#large-target").waitFor();
    assert.equal(await page.locator("#verdict").count(), 0, "no verdict before the click");

    // A probe: the time from a click on "Got it" (the first-visit line, handled by the app)
    // to the line's removal, and whether the match was still running then.
    await page.evaluate(() => {
      window.__probe = new Promise((resolve) => {
        const button = document.querySelector("#first-visit-dismiss");
        button.addEventListener("click", (e) => {
          const clicked = e.timeStamp;
          const seen = () => {
            if (document.querySelector("#first-visit")) return false;
            resolve({ ms: performance.now() - clicked, matching: !!document.querySelector("#matching") });
            return true;
          };
          if (!seen()) new MutationObserver((_, o) => seen() && o.disconnect()).observe(document.body, { childList: true, subtree: true });
        });
      });
    });
    const started = Date.now();
    await page.click("#evaluate-large");
    await page.locator("#matching").waitFor({ timeout: 5_000 });
    assert.match(await page.locator("#matching").textContent(), /matching/);
    await page.click("#first-visit-dismiss", { timeout: 5_000 });
    const probe = await page.evaluate(() => window.__probe);
    console.log(`[worker] click handled in ${probe.ms.toFixed(1)} ms while matching: ${probe.matching}`);
    assert.ok(probe.matching, "the match was still running when the click was handled");
    assert.ok(probe.ms < 100, `the click took ${probe.ms} ms to be handled`);

    await page.locator("#verdict").waitFor({ timeout: 120_000 });
    console.log(`[worker] 512-site match took ${Date.now() - started} ms`);
    assert.equal(await page.locator("#matching").count(), 0, "the note goes once the verdict is in");
    assert.equal(await page.locator("#verdict").getAttribute("data-label"), "Success");
  }));

test("only the latest answer's verdict is shown: a newer answer replaces a running match", () =>
  check("worker stale results", async () => {
    const page = session.browser.page;
    // Still on the 512-site target: start a slow match, then paste the input (another
    // element count) while it runs; the slow match's verdict must never appear.
    const truth = await page.inputValue("#answer");
    await page.fill("#answer", perturbFirstSite(truth, 0.003));
    await page.click("#evaluate-large");
    await page.locator("#matching").waitFor({ timeout: 5_000 });
    await page.click("#paste-input");
    await page.locator("#large-target").waitFor();
    await page.click("#evaluate-large");
    await page.locator("#verdict").waitFor({ timeout: 60_000 });
    assert.equal(await page.locator("#verdict").getAttribute("data-label"), "AtomCountMismatch");
    // Give a stale answer time to arrive: the verdict stays the latest one.
    await page.waitForTimeout(3_000);
    assert.equal(await page.locator("#verdict").getAttribute("data-label"), "AtomCountMismatch");
    assert.equal(await page.locator("#matching").count(), 0);
  }));

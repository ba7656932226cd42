// Small things on the playground that get in the way of students and workshop users (issue 24,
// item 8): re-picking a mineral, dropped file names, the mineral list, the space-group label,
// the overlay on a perfect answer, the Runs charts' labels, "Copied" after Share, and the
// keyboard help from anywhere on the page.
import { test } from "node:test";
import assert from "node:assert/strict";
import { usePlayground } from "../harness.mjs";

const session = usePlayground();
const check = session.check;

// CsCl (a = 4.12 Å) as POSCAR text.
const CSCL = "CsCl\n1.0\n4.12 0 0\n0 4.12 0\n0 0 4.12\nCs Cl\n1 1\nDirect\n0 0 0\n0.5 0.5 0.5\n";

async function pasteText(page, text) {
  await page.evaluate(() => { document.querySelector("details.paste").open = true; });
  await page.fill("#cif-paste", text);
  await page.click("#use-pasted");
  await page.waitForFunction(() => document.querySelector("#input-name").textContent.startsWith("pasted"));
}

/** Drop a file named `name` holding `text` on the paste box, as a file manager would. */
async function dropFile(page, name, text) {
  await page.evaluate(() => { document.querySelector("details.paste").open = true; });
  await page.evaluate(([name, text]) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], name, { type: "text/plain" }));
    const target = document.querySelector("#cif-paste");
    target.dispatchEvent(new DragEvent("dragover", { dataTransfer: dt, bubbles: true, cancelable: true }));
    target.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, [name, text]);
}

/** Click a row of the mineral list as a person would (a real click, not a scripted change). */
async function clickMineral(page, value) {
  const option = page.locator(`#structure-select option[value="${value}"]`);
  await option.scrollIntoViewIfNeeded();
  await option.click();
}

test("re-picking the mineral shown before a paste loads it again", () =>
  check("re-pick mineral", async () => {
    const page = session.browser.page;
    await page.fill("#structure-search", "");
    const halite = await page.locator("#structure-select option", { hasText: "Halite" }).first().getAttribute("value");
    await clickMineral(page, halite);
    await page.waitForFunction(() => document.querySelector("#input-name").textContent.startsWith("Halite"));
    await pasteText(page, CSCL);
    assert.equal(
      await page.locator(`#structure-select option[value="${halite}"]`).evaluate((o) => o.selected),
      false,
      "the list no longer shows the mineral as chosen",
    );
    await clickMineral(page, halite);
    await page.waitForFunction(() => document.querySelector("#input-name").textContent.startsWith("Halite"), null, { timeout: 5_000 });
  }));

test("a dropped file keeps its name: shown as the input's name and used for downloads", () =>
  check("dropped file name", async () => {
    const page = session.browser.page;
    await dropFile(page, "my_CsCl.vasp", CSCL);
    await page.waitForFunction(() => document.querySelector("#input-name").textContent.includes("my_CsCl.vasp"));
    assert.match(await page.locator("#input-name").textContent(), /my_CsCl\.vasp \(POSCAR, 2 sites\)/);
    assert.equal(await page.locator(".exports[data-for=input] a[data-format=CIF]").getAttribute("download"), "my_CsCl.cif");
    assert.equal(await page.locator(".exports[data-for=target] a[data-format=CIF]").getAttribute("download"), "my_CsCl-target.cif");
    // Pasted text has no name: the generic one again.
    await pasteText(page, CSCL);
    assert.match(await page.locator("#input-name").textContent(), /^pasted POSCAR/);
    assert.equal(await page.locator(".exports[data-for=input] a[data-format=CIF]").getAttribute("download"), "input.cif");
  }));

test("the mineral list is sorted by name and its first row is fully visible at the top", () =>
  check("mineral list", async () => {
    const page = session.browser.page;
    await page.fill("#structure-search", "");
    const labels = await page.locator("#structure-select option").allTextContents();
    assert.ok(labels.length > 6, `${labels.length} minerals`);
    const names = labels.map((l) => l.split(" — ")[0].toLowerCase());
    const sorted = [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    assert.deepEqual(names, sorted, "sorted by name, case-insensitively");
    // On load the list scrolls to the chosen mineral: the top row must not be cut (nor
    // at the very top of the list).
    for (const width of [1100, 360]) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(session.server.url + "/");
      await page.waitForSelector("ul.legend[data-for=viewer] li");
      for (const top of [false, true]) {
        const box = await page.locator("#structure-select").evaluate((s, top) => {
          if (top) s.scrollTop = 0;
          const r = s.getBoundingClientRect();
          const [from, to] = [r.top + s.clientTop, r.top + s.clientTop + s.clientHeight];
          const shown = [...s.options].map((o) => o.getBoundingClientRect()).filter((b) => b.bottom > from + 0.5 && b.top < to - 0.5);
          return { from, to, scrollTop: s.scrollTop, firstTop: shown[0].top, firstBottom: shown[0].bottom, rows: shown.length, first: [...s.options].indexOf([...s.options].find((o) => o.getBoundingClientRect().top === shown[0].top)) };
        }, top);
        assert.ok(box.firstTop >= box.from - 1 && box.firstBottom <= box.to + 1, `at ${width} px${top ? ", scrolled to the top" : ""}: ${JSON.stringify(box)}`);
        if (top) assert.equal(box.first, 0);
      }
    }
    await page.setViewportSize({ width: 1100, height: 800 });
  }));

test("the space-group label wraps only as a whole", () =>
  check("space group nowrap", async () => {
    const page = session.browser.page;
    await page.fill("#structure-search", "halite");
    await clickMineral(page, await page.locator("#structure-select option").first().getAttribute("value"));
    await page.waitForFunction(() => document.querySelector("#space-group").textContent === "F m -3 m (225)");
    const split = [];
    for (let width = 360; width <= 1100; width += 6) {
      await page.setViewportSize({ width, height: 800 });
      const lines = await page.locator("#space-group").evaluate((e) => new Set([...e.getClientRects()].map((r) => Math.round(r.top))).size);
      if (lines > 1) split.push(width);
    }
    await page.setViewportSize({ width: 1100, height: 800 });
    assert.deepEqual(split, [], "widths at which the label is split over lines");
  }));

test("the overlay marks no worst site when every distance is 0", () =>
  check("overlay all zero", async () => {
    const page = session.browser.page;
    await page.selectOption("#action-kind", "move");
    await page.click("#random");
    await page.click("#paste-truth");
    await page.waitForSelector("#verdict[data-label=Success]");
    await page.waitForFunction(() => !document.querySelector("#overlay-toggle").disabled);
    await page.check("#overlay-toggle");
    await page.waitForFunction(() => document.querySelector("#viewer-target").dataset.overlay);
    const o = JSON.parse(await page.locator("#viewer-target").getAttribute("data-overlay"));
    assert.equal(o.worst, null, JSON.stringify(o));
    const legend = page.locator(".overlay-legend[data-for=viewer-target]");
    await legend.waitFor();
    assert.equal(await legend.locator(".worst").count(), 0);
    assert.doesNotMatch(await legend.textContent(), /marked red/);
    assert.match(await legend.textContent(), /every site/i);
    await page.uncheck("#overlay-toggle");
  }));

test("Share link says it was copied, next to the button", () =>
  check("share copied", async () => {
    const page = session.browser.page;
    await session.browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: session.server.url });
    await page.click("#share");
    const note = page.locator("#share-copied");
    await note.waitFor();
    assert.match(await note.textContent(), /^Copied/);
    const [b, n] = [await page.locator("#share").boundingBox(), await note.boundingBox()];
    assert.ok(Math.abs(n.y - b.y) < 80 && Math.abs(n.x - b.x) < 700, `note at ${JSON.stringify(n)}, button at ${JSON.stringify(b)}`);
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), await page.inputValue("#share-link"));
  }));

test("? opens the keyboard help from anywhere on the page (not in text fields); Esc closes it", () =>
  check("help anywhere", async () => {
    const page = session.browser.page;
    const help = page.locator(".help-overlay");
    // Nothing focused (a click on the page's background).
    await page.mouse.click(5, 400);
    await page.evaluate(() => document.activeElement?.blur());
    await page.keyboard.press("?");
    await help.waitFor();
    assert.ok(await help.first().isVisible());
    assert.equal(await help.count(), 1);
    await page.keyboard.press("Escape");
    await help.waitFor({ state: "detached" });
    // From a button far from the viewers.
    await page.locator("#share").focus();
    await page.keyboard.press("?");
    await help.waitFor();
    const box = await help.boundingBox();
    const view = page.viewportSize();
    assert.ok(box.y >= 0 && box.y + box.height <= view.height && box.x + box.width <= view.width, `the help is on screen: ${JSON.stringify(box)}`);
    await page.keyboard.press("Escape");
    await help.waitFor({ state: "detached" });
    // Typing a question mark in a text field is typing.
    await page.fill("#structure-search", "");
    await page.locator("#structure-search").focus();
    await page.keyboard.press("?");
    await page.locator("#answer").focus();
    await page.keyboard.type("why?");
    await page.waitForTimeout(200);
    assert.equal(await help.count(), 0, "no help while typing");
    assert.equal(await page.inputValue("#structure-search"), "?");
    assert.ok((await page.inputValue("#answer")).endsWith("why?"));
    await page.fill("#structure-search", "");
    // With a viewer focused: ? opens it once, Esc closes it.
    await page.locator("#viewer").focus();
    await page.keyboard.press("?");
    await help.waitFor();
    await page.waitForTimeout(100);
    assert.equal(await help.count(), 1);
    await page.keyboard.press("Escape");
    await help.waitFor({ state: "detached" });
  }));

test("the Runs charts' labels never run together, with several runs", () =>
  check("chart labels", async () => {
    const page = session.browser.page;
    await page.goto(session.server.url + "/runs");
    await page.waitForSelector("#run-model option[value=reference]", { state: "attached" });
    // Several runs: both baselines, three times, then all six shown together.
    const ids = [];
    for (let i = 0; i < 3; i++) {
      await page.selectOption("#run-model", ["reference", "copy-input"]);
      await page.fill("#run-per-action", "1");
      await page.dispatchEvent("#run-per-action", "change");
      const before = page.url();
      await page.click("#start-run");
      await page.waitForFunction((before) => location.href !== before, before);
      await page.waitForFunction(() => {
        const lines = [...document.querySelectorAll("#run-progress .run-line")];
        return lines.length >= 2 && lines.every((l) => l.textContent.includes("finished"));
      }, null, { timeout: 60_000 });
      ids.push(...(await page.locator("#run-progress .run-line").evaluateAll((ls) => ls.map((l) => l.dataset.run))));
    }
    await page.goto(`${session.server.url}/runs?runs=${ids.join(",")}`);
    await page.waitForFunction((n) => document.querySelectorAll("#success-chart g.bar").length === n * 10, ids.length);
    const runs = await page.locator("#run-progress .run-line").count();
    console.log(`# [info] ${runs} runs in the charts`);
    for (const width of [1100, 360]) {
      await page.setViewportSize({ width, height: 800 });
      for (const chart of ["#success-chart", "#max-dist-chart"]) {
        const clashes = await page.locator(chart).evaluate((svg) => {
          const boxes = [...svg.querySelectorAll("text")].map((t) => ({ text: t.textContent, r: t.getBoundingClientRect() }));
          const out = [];
          for (let i = 0; i < boxes.length; i++) {
            for (let j = i + 1; j < boxes.length; j++) {
              const [a, b] = [boxes[i].r, boxes[j].r];
              if (a.left < b.right + 1 && b.left < a.right + 1 && a.top < b.bottom && b.top < a.bottom) out.push([boxes[i].text, boxes[j].text]);
            }
          }
          return out;
        });
        assert.deepEqual(clashes, [], `${chart} at ${width} px`);
      }
    }
    await page.setViewportSize({ width: 1100, height: 800 });
  }));

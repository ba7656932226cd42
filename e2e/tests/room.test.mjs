// A workshop room in real chromium: a host and three participants, each in their own
// browser context. The participants send the ground truth, a wrong answer and a structure
// edited by hand; the host's screen shows the tally and the mistakes live, an answer opens
// in the playground, and closing the room deletes it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import jsQR from "jsqr";
import { startServer, saveFailure } from "../harness.mjs";

/** The text of the QR code drawn by the SVG at `selector`: rendered to a canvas in the page
 *  (with a white margin), its pixels read here by jsQR. */
async function decodeQr(page, selector) {
  const image = await page.evaluate(async (selector) => {
    const svg = document.querySelector(selector);
    const markup = new XMLSerializer().serializeToString(svg);
    const img = new Image();
    img.src = "data:image/svg+xml;base64," + btoa(unescape(encodeURIComponent(markup)));
    await img.decode();
    const size = 240, margin = 24;
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = size + 2 * margin;
    const ctx = canvas.getContext("2d");
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(img, margin, margin, size, size);
    const pixels = ctx.getImageData(0, 0, canvas.width, canvas.height);
    return { width: canvas.width, height: canvas.height, data: Array.from(pixels.data) };
  }, selector);
  return jsQR(Uint8ClampedArray.from(image.data), image.width, image.height)?.data ?? null;
}

const POSCAR = "CsCl\n1.0\n4.12 0 0\n0 4.12 0\n0 0 4.12\nCs Cl\n1 1\nDirect\n0 0 0\n0.5 0.5 0.5\n";

let server;
let browser;
const pages = {};
const errors = [];
before(async () => {
  server = await startServer();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist", "--disable-quic"],
  });
  for (const who of ["host", "ann", "bob", "cy"]) {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const page = await context.newPage();
    page.on("pageerror", (e) => errors.push(`${who}: ${e}`));
    pages[who] = page;
  }
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

async function check(name, fn) {
  try {
    await fn();
  } catch (e) {
    for (const [who, page] of Object.entries(pages)) await saveFailure(page, `${name} ${who}`);
    throw e;
  }
  assert.deepEqual(errors, [], "no script errors in any page");
}

/** Join `code` as `who` from the join page; lands on the playground with the banner. */
async function join(page, url, who) {
  await page.goto(url);
  await page.fill("#join-name", who);
  await page.click("#join-room");
  await page.waitForSelector("#room-banner");
  assert.match(await page.textContent("#room-banner"), new RegExp(`as ${who}`));
  await page.waitForFunction(() => document.querySelector("#action-prompt")?.value.length > 0);
}

async function send(page, buttonText) {
  const button = page.locator("#send-to-room");
  await page.waitForFunction(() => !document.querySelector("#send-to-room").disabled);
  if (buttonText) assert.equal((await button.textContent()).trim(), buttonText);
  await button.click();
  await page.waitForSelector("#room-sent");
  return page.textContent("#room-sent");
}

async function cell(page, action, side) {
  const td = page.locator(`#room-tally td[data-action="${action}"][data-side="${side}"]`);
  if ((await td.count()) === 0) return null;
  return [Number(await td.getAttribute("data-successes")), Number(await td.getAttribute("data-attempts"))];
}

let code;
let joinLink;
test("a host opens a room with a code and a QR code", () =>
  check("room open", async () => {
    const host = pages.host;
    await host.goto(server.url + "/room");
    await host.fill("#room-name", "Tuesday workshop");
    await host.selectOption("#room-ttl", "24");
    await host.click("#open-room");
    await host.waitForSelector("#room-code");
    code = (await host.textContent("#room-code")).trim();
    assert.match(code, /^[A-HJKMNP-Z2-9]{6}$/);
    joinLink = await host.getAttribute("#room-link", "href");
    assert.equal(joinLink, `${server.url}/room?code=${code}`);
    // The QR code, drawn as the page shows it and read by a QR decoder, is the join link.
    assert.equal(await decodeQr(host, "#room-qr svg"), joinLink);
    assert.match(await host.textContent("#room-expiry"), /deleted at/);
    await host.waitForSelector("#room-counts");
    assert.match(await host.textContent("#room-counts"), /^0 answers/);
    // A reload keeps the host's room (the token stays in this browser only).
    await host.reload();
    await host.waitForSelector("#room-counts");
    assert.equal((await host.textContent("#room-code")).trim(), code);
  }));

let bobLabel;
test("three participants send the ground truth, a wrong answer and a hand edit", () =>
  check("room attempts", async () => {
    const { ann, bob, cy, host } = pages;
    // ann scans the QR code (the join link) and sends the ground truth.
    await join(ann, joinLink, "ann");
    await ann.click("#paste-truth");
    assert.match(await send(ann, "Send to room"), /Sent\. The server's check: right \(Success\)/);

    // bob types the code (in lower case) and sends the input unchanged: wrong.
    await bob.goto(server.url + "/room");
    await bob.fill("#join-code", code.toLowerCase());
    await bob.fill("#join-name", "bob");
    await bob.click("#join-room");
    await bob.waitForSelector("#room-banner");
    await bob.waitForFunction(() => document.querySelector("#action-prompt")?.value.length > 0);
    await bob.click("#paste-input");
    const sent = await send(bob, "Send to room");
    bobLabel = /\((\w+)\)/.exec(sent)?.[1];
    assert.ok(bobLabel && bobLabel !== "Success", sent);

    // cy edits the structure by hand: removes the Cl of CsCl for "remove atom 1".
    await join(cy, joinLink, "cy");
    await cy.locator("details.paste summary").click();
    await cy.fill("#cif-paste", POSCAR);
    await cy.click("#use-pasted");
    await cy.waitForFunction(() => JSON.parse(document.querySelector("#viewer").dataset.sites || "[]").length === 2);
    await cy.fill("#action-prompt", "Remove the atom at index 1 from the cif file.");
    const sites = JSON.parse(await cy.locator("#viewer").getAttribute("data-sites"));
    await cy.locator("#viewer").click({ position: { x: sites[1][0], y: sites[1][1] } });
    await cy.waitForSelector("ul.picked[data-for=viewer] li[data-site='1']");
    await cy.click(".edit-tools[data-for=viewer] [data-edit=delete]");
    await cy.waitForFunction(() => JSON.parse(document.querySelector("#viewer").dataset.sites || "[]").length === 1);
    await cy.click("#edit-as-answer");
    // The input is back to before the edit; the edited structure is the answer.
    await cy.waitForFunction(() => JSON.parse(document.querySelector("#viewer").dataset.sites || "[]").length === 2);
    assert.equal(await cy.inputValue("#action-prompt"), "Remove the atom at index 1 from the cif file.");
    assert.match(await cy.inputValue("#answer"), /Cs/);
    assert.match(await send(cy, "Send my hand edit to the room"), /right \(Success\)/);

    // The host's screen catches up by itself.
    await host.waitForFunction(() => /^3 answers from 3 participants/.test(document.querySelector("#room-counts")?.textContent ?? ""), null, { timeout: 15_000 });
    assert.deepEqual(await cell(host, "remove", "people"), [1, 1]);
    const action = await host.locator("#room-latest tr[data-label]").last().locator("td").nth(3).textContent();
    assert.deepEqual(await cell(host, action, "pasted"), [1, 2]);
    const failures = host.locator("#room-failures li");
    assert.equal(await failures.count(), 1);
    assert.equal(await failures.first().getAttribute("data-label"), bobLabel);
    const whos = await host.locator("#room-latest td.who").allTextContents();
    assert.deepEqual(whos, ["cy", "bob", "ann"]);
  }));

test("a host on a phone sees who answered, the result and the open link of every answer without scrolling sideways", () =>
  check("room phone host", async () => {
    const host = pages.host;
    await host.setViewportSize({ width: 390, height: 800 });
    try {
      const rows = host.locator("#room-latest tr[data-label]");
      assert.equal(await rows.count(), 3);
      for (const row of await rows.all()) {
        for (const part of ["td.who", "td.result", "a.open-attempt"]) {
          const box = await row.locator(part).boundingBox();
          assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `${part} lies at ${JSON.stringify(box)}`);
        }
        const who = await row.locator("td.who").boundingBox();
        const result = await row.locator("td.result").boundingBox();
        assert.ok(Math.abs(who.y - result.y) < 4, "who and the result share the card's first line");
      }
      const open = await host.locator("#room-latest a.open-attempt").first().boundingBox();
      assert.ok(open.height >= 24, `the open link is ${open.height} px high`);
      const scroll = await host.locator("#room-latest").evaluate((t) => [t.parentElement.scrollWidth, t.parentElement.clientWidth]);
      assert.ok(scroll[0] <= scroll[1], `the answers scroll sideways: ${scroll}`);
    } finally {
      await host.setViewportSize({ width: 1100, height: 800 });
    }
  }));

test("a participant on a phone has the room banner on the first screen and wherever they scroll", () =>
  check("room phone participant", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 800 }, isMobile: true, hasTouch: true });
    const phone = await context.newPage();
    phone.on("pageerror", (e) => errors.push(`phone: ${e}`));
    try {
      await join(phone, joinLink, "dee");
      const onScreen = async () => {
        const box = await phone.locator("#room-banner").boundingBox();
        return box && box.y >= 0 && box.y + box.height <= 800;
      };
      assert.ok(await onScreen(), "the banner is on the first screen");
      await phone.evaluate(() => window.scrollBy(0, 1500));
      await phone.waitForFunction(() => window.scrollY > 500);
      assert.ok(await onScreen(), "the banner stays on screen after scrolling");
      // Nothing of the page hides under it: the page's end scrolls clear of the banner.
      await phone.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
      const note = await phone.locator(".frame-note").boundingBox();
      const banner = await phone.locator("#room-banner").boundingBox();
      assert.ok(note.y + note.height <= banner.y + 1, `the last line ends at ${note.y + note.height}, the banner starts at ${banner.y}`);
    } finally {
      await context.close();
    }
  }));

test("an answer opens in the playground as a case", () =>
  check("room open case", async () => {
    const host = pages.host;
    const row = host.locator(`#room-latest tr[data-label="${bobLabel}"]`);
    const [popup] = await Promise.all([
      host.context().waitForEvent("page"),
      row.locator("a.open-attempt").click(),
    ]);
    popup.on("pageerror", (e) => errors.push(`case: ${e}`));
    await popup.waitForURL(/\/#case=/);
    await popup.waitForSelector("#answer");
    await popup.waitForFunction(() => document.querySelector("#answer").value.includes("<cif>"));
    // The same verdict as the server's, recomputed in the page from the case.
    await popup.waitForSelector("#verdict");
    assert.equal(await popup.getAttribute("#verdict", "data-label"), bobLabel);
    await popup.close();
  }));

test("closing the room deletes it; answers sent after are refused", () =>
  check("room close", async () => {
    const { host, ann } = pages;
    await host.click("#close-room");
    assert.match(await host.textContent("#close-room"), /Delete the room/);
    await host.click("#close-room");
    await host.waitForSelector("#open-room");
    const status = await fetch(`${server.url}/api/rooms/${code}`).then((r) => r.status);
    assert.equal(status, 404);
    assert.match(await send(ann), /not sent: no open room/);
  }));

test("the room page fits a 360 px screen", () =>
  check("room phone", async () => {
    const host = pages.host;
    await host.setViewportSize({ width: 360, height: 740 });
    await host.click("#open-room");
    await host.waitForSelector("#room-counts");
    const scroll = await host.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(scroll <= 360, `the room page is ${scroll} px wide`);
  }));

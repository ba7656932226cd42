// The suites page beyond scoring: a model asked with the task's exact messages, and a share
// link that reopens the task with its answer in a fresh browser.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, withScreenshot, fakeProvider } from "../harness.mjs";

let provider;
let server;
let browser;

before(async () => {
  provider = await fakeProvider("The answer is B.\n<answer>B</answer>");
  server = await startServer({
    configToml: `[[models]]\nname = "fake-gpt"\nprovider = "openai-compatible"\nmodel = "f"\nbase_url = "${provider.baseUrl}"\napi_key_env = "E2E_FAKE_KEY"\n`,
    env: { E2E_FAKE_KEY: "sk-e2e-suites" },
  });
  browser = await launchBrowser();
  await browser.page.goto(server.url + "/suites");
  await browser.page.waitForSelector("#suite-select option[value=mattools-qa]", { state: "attached" });
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await provider?.close();
});

const check = (name, fn) => withScreenshot(browser.page, name, fn);

test("a MatTools question asked of a model with its exact messages, then shared and reopened", () =>
  check("suite ask and share", async () => {
    const page = browser.page;
    await page.selectOption("#suite-select", "mattools-qa");
    await page.waitForFunction(() => document.querySelectorAll("#suite-task option").length > 1);
    const taskId = await page.inputValue("#suite-task");
    const prompt = await page.locator("#suite-prompt").textContent();
    await page.selectOption("#model-select", "fake-gpt");
    await page.click("#ask-model");
    await page.waitForFunction(() => /<answer>B<\/answer>/.test(document.querySelector("#suite-answer").value));
    // The provider got the task's messages, not a paraphrase.
    const sent = JSON.parse(provider.requests.at(-1).body).messages;
    const last = sent.at(-1).content;
    assert.ok(prompt.includes(last.slice(0, 200)), `sent: ${last.slice(0, 200)}`);
    await page.click("#suite-score");
    await page.waitForSelector("#suite-label");
    const label = await page.locator("#suite-label").textContent();
    await page.click("#suite-share");
    const link = await page.locator("#suite-share-link").getAttribute("href");
    assert.match(link, /\/suites#suite-case=[A-Za-z0-9_-]+$/);
    // A fresh browser opens the same task with the same answer, and scores it the same.
    const fresh = await launchBrowser();
    try {
      await withScreenshot(fresh.page, "suite link reopened", async () => {
        await fresh.page.goto(link);
        await fresh.page.waitForFunction(() => /<answer>B<\/answer>/.test(document.querySelector("#suite-answer")?.value ?? ""));
        // The task list arrives from the server after the link is read.
        await fresh.page.waitForFunction((id) => document.querySelector("#suite-task")?.value === id, taskId);
        assert.equal(await fresh.page.inputValue("#suite-select"), "mattools-qa");
        assert.equal(await fresh.page.locator("#suite-prompt").textContent(), prompt);
        // The verdict comes with it, scored by the server on opening (no click).
        await fresh.page.waitForSelector("#suite-label");
        assert.equal(await fresh.page.locator("#suite-label").textContent(), label);
      });
      // A short link (the server keeps the case) opens the same task, answer and verdict.
      await page.click("#suite-short-link");
      await page.waitForFunction(() => /\/c\/[A-Za-z0-9_-]+$/.test(document.querySelector("#suite-share-link")?.getAttribute("href") ?? ""));
      const short = await page.locator("#suite-share-link").getAttribute("href");
      assert.ok(short.length < 80, `the short link has ${short.length} characters: ${short}`);
      await withScreenshot(fresh.page, "suite short link reopened", async () => {
        await fresh.page.goto("about:blank");
        await fresh.page.goto(short);
        await fresh.page.waitForFunction((id) => document.querySelector("#suite-task")?.value === id, taskId);
        assert.match(await fresh.page.inputValue("#suite-answer"), /<answer>B<\/answer>/);
        await fresh.page.waitForSelector("#suite-label");
        assert.equal(await fresh.page.locator("#suite-label").textContent(), label);
      });
    } finally {
      await fresh.close();
    }
  }));

test("a damaged suite link says so at the top, in plain words", () =>
  check("suite damaged link", async () => {
    const page = browser.page;
    await page.goto(server.url + "/suites#suite-case=%%%");
    await page.waitForSelector("#suite-link-error");
    assert.match(await page.locator("#suite-link-error").textContent(), /Cannot open the shared task: the link is damaged/);
  }));

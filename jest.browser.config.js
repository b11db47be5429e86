// Browser checks (*.browser.ts): pages opened in headless Chromium (Debian's `chromium` at /usr/bin/chromium).
// Not part of `npm test` (a fresh machine has no browser); `.ci/run` installs Chromium and runs them, and they fail
// when Chromium is missing.
const preset = require('./jest.preset');
module.exports = {
  ...preset,
  testMatch: ['<rootDir>/{apps,libs,tools}/**/*.browser.ts'],
};

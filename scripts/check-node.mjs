#!/usr/bin/env node
// Refuses a Node.js older than the engines' 22.19 in a clone, with one line saying what to do:
// npm only warns (EBADENGINE) and then builds and starts on Node 20 without a word. Run by the
// preinstall script (npm ci, npm install), by build-if-stale.mjs (npm start, npm run dev) and by
// test.mjs (npm test). The installed package's CLI says the same (src/node-check.ts; a test keeps
// the two lines equal). Kept to syntax and APIs every Node since 12 has.
const COMMANDS = { preinstall: 'npm ci', install: 'npm ci', start: 'npm start', test: 'npm test', dev: 'npm run dev' };

export function nodeVersionProblem(version, command) {
  const bare = version.replace(/^v/, '');
  const [major = 0, minor = 0] = bare.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 19)) return undefined;
  return (
    `payments-sandbox needs Node.js 22.19 or later, this is v${bare}: ` +
    `install Node 22 (nvm install 22) or run through npx: npx -y -p node@22 -c '${command}'`
  );
}

const event = process.env.npm_lifecycle_event;
const problem = nodeVersionProblem(process.versions.node, COMMANDS[event] ?? (event ? `npm run ${event}` : 'npm ci'));
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}

/**
 * Refuses a Node.js older than the engines' 22.19 with one line that says what to do, before
 * anything else of the CLI loads: on Node 20 the sandbox would otherwise start without a word
 * and fail later, in ways that do not name the cause. bin.ts imports this module first, and ES
 * modules are evaluated in import order, so this runs before commander, express and the rest.
 * No dependency and nothing newer than ES2020, so any Node that loads an ES module can run it.
 * scripts/check-node.mjs says the same for npm ci, npm start and npm test in a clone (a test
 * keeps the two lines equal).
 */

export const MINIMUM_NODE = '22.19';

/** The line a too-old Node gets, or undefined when `version` ("v20.19.5" or "20.19.5") is recent enough. */
export function nodeVersionProblem(version: string, command: string): string | undefined {
  const bare = version.replace(/^v/, '');
  const [major = 0, minor = 0] = bare.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 19)) return undefined;
  return (
    `payments-sandbox needs Node.js ${MINIMUM_NODE} or later, this is v${bare}: ` +
    `install Node 22 (nvm install 22) or run through npx: npx -y -p node@22 -c '${command}'`
  );
}

const args = process.argv.slice(2).join(' ');
const problem = nodeVersionProblem(process.versions.node, `npx payments-sandbox${args ? ` ${args}` : ''}`);
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}

// After `npm install`: say, in one line, which Node.js runs Herald. The root
// package depends on the `node` package (Node.js 24 from the npm registry), and
// npm puts node_modules/.bin first on PATH for every script, so `npm start`,
// `npm test` and the rest run on it even when the machine's own Node is older.
const machineNode = process.env.npm_node_execpath;
const bundled = process.version;
if (machineNode && machineNode !== process.execPath) {
  const { execFileSync } = await import('node:child_process');
  let machineVersion = 'unknown';
  try {
    machineVersion = execFileSync(machineNode, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    // The version is only for the message.
  }
  if (machineVersion !== bundled) {
    console.log(`Herald's npm scripts run on Node.js ${bundled} from node_modules/.bin (this machine's node is ${machineVersion}).`);
  }
}

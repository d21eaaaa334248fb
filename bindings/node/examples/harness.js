'use strict';
// A harness's view: confine an argv the model asked for (spawn it yourself), or let the binding
// run it with live output. Run: node examples/harness.js [WORKSPACE]
const { DshSandboxProvider, SandboxUnavailableError } = require('dsh-sandbox');

async function main() {
  const workspaceRoot = process.argv[2] || process.cwd();
  const sandbox = new DshSandboxProvider();  // finds dsh-sandbox on PATH
  try {
    const confined = sandbox.confine(['bash', '-c', 'ls'], { mode: 'read-only', workspaceRoot });
    console.log(`spawn instead: ${confined.argv[0]} ... (${confined.backend}, ${confined.enforcement})`);
    const result = await sandbox.run(['bash', '-c', 'echo hello; touch ../outside'], {
      mode: 'workspace-write', workspaceRoot, cwd: workspaceRoot,
      onStdout: (chunk) => process.stdout.write(`[live] ${chunk}`),
    });
    console.log(`exit ${result.exitCode}, denied by the sandbox: ${result.denied}`);
  } catch (error) {
    if (error instanceof SandboxUnavailableError) console.error(`cannot confine here: ${error.message}`);
    else throw error;
  }
}

main();

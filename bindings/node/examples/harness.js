'use strict';
// A harness's view: confine an argv the model asked for (spawn it yourself), or let the binding
// run it with live output, a deny-read rule and an abort button; start a background job.
// Run: node examples/harness.js [WORKSPACE]
const { DshSandboxProvider, SandboxUnavailableError, SandboxAbortError } = require('dsh-sandbox');

async function main() {
  const workspaceRoot = process.argv[2] || process.cwd();
  const sandbox = new DshSandboxProvider();  // finds dsh-sandbox on PATH
  try {
    const confined = sandbox.confine(['bash', '-c', 'ls'], { mode: 'read-only', workspaceRoot });
    console.log(`spawn instead: ${confined.argv[0]} ... (${confined.backend}, ${confined.enforcement})`);
    const result = await sandbox.run(['bash', '-c', 'echo hello; touch ../outside'], {
      mode: 'workspace-write', workspaceRoot, cwd: workspaceRoot,
      denyRead: ['~/.ssh'], maxProcesses: 256, timeout: 60,
      onStdout: (chunk) => process.stdout.write(`[live] ${chunk}`),
    });
    console.log(`exit ${result.exitCode}, denied by the sandbox: ${result.denied}`);

    // An abort button: aborting ends the whole confined tree.
    const controller = new AbortController();
    const slow = sandbox.run(['sleep', '30'], { workspaceRoot, signal: controller.signal });
    controller.abort();
    await slow.catch((error) => { if (!(error instanceof SandboxAbortError)) throw error; });
    console.log('aborted: the sleep and everything it started are gone');

    const job = await sandbox.start(['bash', '-c', 'echo from the job'], { workspaceRoot });
    const done = await job.wait({ timeout: 30 });
    console.log(`job ${job.handle}: ${done.state}, output ${JSON.stringify(done.stdout)}`);
  } catch (error) {
    if (error instanceof SandboxUnavailableError) console.error(`cannot confine here: ${error.message}`);
    else throw error;
  }
}

main();

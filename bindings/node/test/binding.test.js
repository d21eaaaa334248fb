'use strict';
// Against the real CLI: `dsh-sandbox` on PATH (ctest puts the build's bin/ first). Every claim
// about confinement is checked from outside: the file the command tried to write is not there.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { DshSandboxProvider, SandboxError, SandboxUnavailableError, confine, run } = require('..');

const base = fs.mkdtempSync(path.join('/var/tmp', 'dsh-node-'));
const workspaceRoot = path.join(base, 'workspace');
fs.mkdirSync(workspaceRoot);
test.after(() => fs.rmSync(base, { recursive: true, force: true }));

test('confine returns a ConfinedArgv with the reference field names', () => {
  const provider = new DshSandboxProvider();
  const confined = provider.confine(['ls', '-l'], { mode: 'read-only', workspaceRoot });
  assert.deepStrictEqual(confined.argv.slice(-2), ['ls', '-l']);
  assert.ok(['full', 'partial'].includes(confined.enforcement));
  assert.ok(Array.isArray(confined.denialSignatures));
  assert.ok(confined.runnerFailureRules.every((rule) => Array.isArray(rule.fatalSignatures)));
});

test('the confined argv, spawned by the caller, cannot write outside the workspace', () => {
  const target = path.join(base, 'outside-confine.txt');
  const confined = confine(['bash', '-c', `echo x > ${target}`], { mode: 'workspace-write', workspaceRoot });
  assert.throws(() => execFileSync(confined.argv[0], confined.argv.slice(1), { cwd: workspaceRoot, stdio: 'ignore' }));
  assert.strictEqual(fs.existsSync(target), false);
});

test('confine refuses bad input with a SandboxError naming what to fix', () => {
  assert.throws(() => confine(['ls'], { mode: 'bogus', workspaceRoot }),
                (error) => error instanceof SandboxError && /bogus/.test(error.message));
  assert.throws(() => confine(['ls'], { mode: 'read-only', workspaceRoot }, { binary: '/nonexistent/dsh-sandbox' }),
                SandboxUnavailableError);
});

test('run streams output live and resolves with the outcome', async () => {
  const chunks = [];
  const result = await run(['bash', '-c', 'echo live; exit 7'], {
    mode: 'read-only', workspaceRoot, cwd: workspaceRoot, onStdout: (chunk) => chunks.push(chunk),
  });
  assert.strictEqual(result.exitCode, 7);
  assert.strictEqual(result.exitStatus, 7);
  assert.strictEqual(result.schemaVersion, 1);
  assert.strictEqual(chunks.join(''), 'live\n');
  assert.strictEqual(result.stdout, 'live\n');
});

test('run reports a denial and the write did not happen', async () => {
  const target = path.join(base, 'outside-run.txt');
  const result = await run(['bash', '-c', `echo x > ${target}`], {
    mode: 'workspace-write', workspaceRoot, cwd: workspaceRoot,
  });
  assert.strictEqual(result.denied, true);
  assert.notStrictEqual(result.exitCode, 0);
  assert.strictEqual(fs.existsSync(target), false);
});

test('run rejects a usage error with its code', async () => {
  await assert.rejects(run(['true'], { timeout: 601, workspaceRoot }),
                       (error) => error.code === 'SANDBOX_INVALID_INPUT' && /600/.test(error.message));
});

test('the example runs as a harness author would copy it', () => {
  const modules = path.join(base, 'node_modules');
  fs.mkdirSync(modules);
  fs.symlinkSync(path.resolve(__dirname, '..'), path.join(modules, 'dsh-sandbox'));
  const out = execFileSync(process.execPath, [path.resolve(__dirname, '../examples/harness.js'), workspaceRoot],
                           { env: { ...process.env, NODE_PATH: modules }, encoding: 'utf8' });
  assert.match(out, /\[live\] hello/);
  assert.match(out, /denied by the sandbox: true/);
  assert.strictEqual(fs.existsSync(path.join(base, 'outside')), false);
});

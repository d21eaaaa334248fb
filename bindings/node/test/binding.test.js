'use strict';
// Against the real CLI: `dsh-sandbox` on PATH (the packaging tests put an installed copy's bin/
// first). Every claim about confinement is checked from outside: the file the command tried to
// write is not there, the loopback server's own log says which requests arrived, the processes
// of an aborted or killed tree are gone from /proc.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync, spawn } = require('node:child_process');
const readline = require('node:readline');
const {
  DshSandboxProvider, SandboxError, SandboxInputError, SandboxUnavailableError, SandboxAbortError,
  OPTIONS, confine, run, start, listJobs,
} = require('..');

const base = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', 'dsh-node-')));
const workspaceRoot = path.join(base, 'workspace');
fs.mkdirSync(workspaceRoot);
const httpServer = process.env.DSH_HTTP_SERVER
  || path.resolve(__dirname, '../../../tests/packaging/http_server.py');
test.after(() => fs.rmSync(base, { recursive: true, force: true }));

let nonceCount = 0;
const nonce = () => `${process.pid}${Date.now() % 100000}${nonceCount++}`;

// Host pids whose command line contains `token` (read from outside the sandbox's pid namespace).
function pidsWith(token) {
  const found = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(token)) found.push(Number(entry));
    } catch { /* it ended meanwhile */ }
  }
  return found;
}

// The host pid of the process that calls itself `nsPid` inside its namespace and runs `token`.
function hostPid(token, nsPid) {
  return pidsWith(token).find((pid) => {
    try {
      const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('NSpid:'));
      return Number(line.trim().split(/\s+/).pop()) === nsPid;
    } catch { return false; }
  });
}

// A process is gone when /proc has no entry for it still running `token` (a reused pid runs
// something else).
function gone(pid, token) {
  try { return !fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(token); } catch { return true; }
}

async function until(what, check, ms = 20000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// The loopback HTTP server of the packaging tests: serves `site`, logs each request's path.
async function startServer() {
  const dir = fs.mkdtempSync(path.join(base, 'site-'));
  fs.writeFileSync(path.join(dir, 'marker.txt'), 'reached through dsh-netproxy\n');
  const log = path.join(dir, 'requests.log');
  fs.writeFileSync(log, '');
  const child = spawn('/usr/bin/python3', [httpServer, dir, log], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', () => reject(new Error('the HTTP server did not start')));
  });
  return { port: Number(port), requests: () => fs.readFileSync(log, 'utf8').split('\n'), stop: () => child.kill() };
}

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

test('confine takes the path rules: a deny-read path is unreadable to the argv it prints', () => {
  const secret = path.join(base, 'confine-secret.txt');
  fs.writeFileSync(secret, 'confine-secret\n');
  fs.chmodSync(secret, 0o644);
  const confined = confine(['cat', secret], { mode: 'read-only', workspaceRoot, denyRead: [secret] });
  assert.ok(confined.policy.denyRead.includes(secret));
  let out = '';
  try {
    out = execFileSync(confined.argv[0], confined.argv.slice(1), { cwd: workspaceRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch (error) { out = error.stdout; }
  assert.doesNotMatch(out, /confine-secret/);
});

test('confine refuses bad input with a SandboxInputError naming what to fix', () => {
  assert.throws(() => confine(['ls'], { mode: 'bogus', workspaceRoot }),
                (error) => error instanceof SandboxInputError && error instanceof SandboxError && /bogus/.test(error.message));
  assert.throws(() => confine(['ls'], { mode: 'read-only', workspaceRoot }, { binary: '/nonexistent/dsh-sandbox' }),
                (error) => error instanceof SandboxUnavailableError && error.code === 'SANDBOX_UNAVAILABLE');
});

test('run streams output live and resolves with every field of the run --json object', async () => {
  // The command waits for a file the test makes only after it saw the first chunk: the chunk
  // arrived while the command was still running.
  const go = path.join(workspaceRoot, 'go');
  const chunks = [];
  const result = await run(['bash', '-c', `echo first; until [ -e ${go} ]; do sleep 0.05; done; echo second; exit 7`], {
    mode: 'read-only', workspaceRoot,
    onStdout: (chunk) => { chunks.push(chunk); if (chunk.includes('first')) fs.writeFileSync(go, ''); },
  });
  fs.rmSync(go);
  assert.strictEqual(result.exitCode, 7);
  assert.strictEqual(result.exitStatus, 7);
  assert.strictEqual(result.schemaVersion, 1);
  assert.strictEqual(chunks.join(''), 'first\nsecond\n');
  assert.ok(chunks.length >= 2);
  assert.strictEqual(result.stdout, 'first\nsecond\n');
  for (const field of ['mode', 'workspaceRoot', 'network', 'backend', 'enforcement', 'strictEnforcement',
    'ungoverned', 'signal', 'timedOut', 'denied', 'runnerFailed', 'notStarted', 'stderr', 'truncated',
    'durationMs', 'interrupted', 'bounds', 'policy']) {
    assert.ok(field in result, field);
  }
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

test('cwd is where the command starts', async () => {
  const sub = path.join(workspaceRoot, 'sub');
  fs.mkdirSync(sub, { recursive: true });
  const result = await run(['pwd'], { workspaceRoot, cwd: sub });
  assert.strictEqual(result.stdout, `${sub}\n`);
  // Without workspaceRoot the CLI starts there too, so the workspace defaults to it.
  const defaulted = await run(['pwd'], { cwd: sub });
  assert.strictEqual(defaulted.workspaceRoot, sub);
});

test('denyRead: the path is refused inside and the policy reports it; readable without it', async () => {
  const secret = path.join(base, 'secret.txt');
  fs.writeFileSync(secret, 'the-secret\n');
  fs.chmodSync(secret, 0o644);
  const plain = await run(['cat', secret], { workspaceRoot });
  assert.strictEqual(plain.stdout, 'the-secret\n');
  const denied = await run(['cat', secret], { workspaceRoot, denyRead: [secret] });
  assert.notStrictEqual(denied.exitCode, 0);
  assert.doesNotMatch(denied.stdout, /the-secret/);
  assert.match(denied.stderr, /Permission denied|Operation not permitted|No such file/);
  assert.ok(denied.policy.denyRead.includes(secret));
});

test('allowWrite opens a directory outside the workspace; denyWrite closes one inside it', async () => {
  const extra = fs.mkdtempSync(path.join(base, 'extra-'));
  fs.chmodSync(extra, 0o777);
  const protectedDir = path.join(workspaceRoot, 'protected');
  fs.mkdirSync(protectedDir, { recursive: true });
  const result = await run(['sh', '-c', `echo a > ${extra}/a; echo b > ${protectedDir}/b`], {
    mode: 'workspace-write', workspaceRoot, allowWrite: [extra], denyWrite: [protectedDir],
  });
  assert.strictEqual(fs.readFileSync(path.join(extra, 'a'), 'utf8'), 'a\n');
  assert.strictEqual(fs.existsSync(path.join(protectedDir, 'b')), false);
  assert.notStrictEqual(result.exitCode, 0);
  assert.ok(result.policy.allowWrite.includes(extra));
  assert.ok(result.policy.denyWrite.includes(protectedDir));
});

test('allowCache makes the named cache writable', async () => {
  const home = fs.mkdtempSync(path.join(base, 'home-'));
  const saved = process.env.HOME;
  process.env.HOME = home;
  try {
    const result = await run(['sh', '-c', `touch ${home}/.npm/_cacache/written`], {
      mode: 'workspace-write', workspaceRoot, allowCache: ['npm'],
    });
    assert.deepStrictEqual(result.policy.allowCache, ['npm']);
    assert.strictEqual(result.exitCode, 0, result.stderr);
    assert.ok(fs.existsSync(path.join(home, '.npm/_cacache/written')));
  } finally {
    process.env.HOME = saved;
  }
});

test('the bounds and the session log reach the CLI', async () => {
  const session = path.join(base, 'session.jsonl');
  const result = await run(['true'], { workspaceRoot, maxProcesses: 1000, maxMemory: '256M', session });
  assert.strictEqual(result.bounds.processes.max, 1000);
  assert.strictEqual(result.bounds.memory.max, 256 * 1024 * 1024);
  const lines = fs.readFileSync(session, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(lines.some((line) => JSON.stringify(line).includes('"true"')), 'an audit line of the run');
});

// A cross-run attack through this door: one confined run plants a symlink and a config in its
// workspace; neither decides a later call, and nothing reaches the symlink's target.
test('what a confined run planted decides no later call', async () => {
  const target = path.join(base, `target-${nonce()}`);
  fs.mkdirSync(target, { mode: 0o777 });
  fs.chmodSync(target, 0o777);
  const planted = await run(['sh', '-c', `ln -s ${target} link && echo '{"mode": "workspace-write"}' > config.json`], {
    mode: 'workspace-write', workspaceRoot, cwd: workspaceRoot,
  });
  assert.strictEqual(planted.exitCode, 0, planted.stderr);
  await assert.rejects(
    run(['sh', '-c', 'echo planted > f'], { mode: 'workspace-write', workspaceRoot: path.join(workspaceRoot, 'link') }),
    (error) => error instanceof SandboxInputError && /symlink/.test(error.message),
  );
  await assert.rejects(
    run(['sh', '-c', `echo planted > ${target}/g`], { workspaceRoot, config: path.join(workspaceRoot, 'config.json') }),
    (error) => error instanceof SandboxInputError && /cannot be trusted/.test(error.message),
  );
  assert.deepStrictEqual(fs.readdirSync(target), []);
  fs.rmSync(path.join(workspaceRoot, 'link'));
  fs.rmSync(path.join(workspaceRoot, 'config.json'));
});

test('the allow-list reaches the loopback server only for a listed name', async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const resolve = ['allowed.test=127.0.0.1', 'other.test=127.0.0.1'];
  const script = `curl -sS http://allowed.test:${server.port}/marker.txt; `
    + `curl -s -o /dev/null -w '%{http_code}\\n' http://other.test:${server.port}/other.txt`;
  // 127.0.0.1 is listed too: the proxy drops a name's loopback address unless an address entry
  // admits it (docs/evidence-and-network.md).
  const result = await run(['sh', '-c', script], {
    workspaceRoot, network: { allow: ['allowed.test', '127.0.0.1'] }, networkResolve: resolve,
  });
  assert.strictEqual(result.network, 'allow-list');
  const [first, second] = result.stdout.split('\n');
  assert.strictEqual(first, 'reached through dsh-netproxy');
  assert.notStrictEqual(second, '200');
  assert.ok(server.requests().includes('/marker.txt'));
  assert.ok(!server.requests().includes('/other.txt'));
  // The string form, not listing allowed.test (nor the loopback address): nothing reaches the
  // server.
  const unlisted = await run(['sh', '-c', `curl -fsS http://allowed.test:${server.port}/unlisted.txt`], {
    workspaceRoot, network: 'allow:other.test', networkResolve: resolve,
  });
  assert.notStrictEqual(unlisted.exitCode, 0);
  // Default (deny): no network at all.
  const denied = await run(['sh', '-c', `curl -fsS http://127.0.0.1:${server.port}/denied.txt`], { workspaceRoot });
  assert.notStrictEqual(denied.exitCode, 0);
  assert.ok(!server.requests().includes('/unlisted.txt'));
  assert.ok(!server.requests().includes('/denied.txt'));
});

test('aborting ends the whole tree: the grandchild is gone and its marker never appears', async () => {
  const token = `2.${nonce()}`;
  const marker = path.join(workspaceRoot, `abort-marker-${token}`);
  const controller = new AbortController();
  let printed = null;
  let startedAt = 0;
  // The grandchild (a shell in the background) prints its pid, then would write the marker
  // after 2 s; its parent waits for it.
  const script = `sh -c 'echo "pid $$"; sleep ${token}; touch ${marker}' & wait`;
  // Left alone, the command does write its marker: what the aborted run's absence means.
  const alone = await run(['sh', '-c', script], { mode: 'workspace-write', workspaceRoot });
  assert.strictEqual(alone.exitCode, 0);
  assert.ok(fs.existsSync(marker));
  const withSignal = run(['sh', '-c', script.replace(token, `${token}1`).replace(marker, `${marker}1`)], {
    mode: 'workspace-write', workspaceRoot, signal: controller.signal,
    onStdout: (chunk) => {
      const found = /pid (\d+)/.exec(chunk);
      if (found && printed === null) { printed = Number(found[1]); startedAt = Date.now(); }
    },
  });
  let settled = null;
  withSignal.then(() => { settled = 'resolved'; }, (error) => { settled = error; });
  const pid = await until('the grandchild, seen from outside',
                          () => settled !== null || (printed !== null && hostPid(`${token}1`, printed)));
  assert.strictEqual(settled, null, 'the run ended before it was aborted');
  controller.abort();
  await assert.rejects(withSignal, (error) => error instanceof SandboxAbortError && error.name === 'AbortError'
    && error.code === 'ABORT_ERR' && error.result.interrupted === 'SIGTERM');
  assert.ok(gone(pid, `${token}1`), `pid ${pid} still runs`);
  assert.deepStrictEqual(pidsWith(`${token}1`), []);
  // Past the grandchild's 2 s (and a margin): the marker it would have written is absent.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt + 3000 - Date.now())));
  assert.strictEqual(fs.existsSync(`${marker}1`), false);
});

test('a callback that throws ends the tree and is the call\'s error', async () => {
  // Had the call waited for the command instead, the marker would be there when it returned.
  const token = `2.${nonce()}`;
  const marker = path.join(workspaceRoot, `callback-marker-${token}`);
  const boom = new Error('the harness failed');
  await assert.rejects(run(['sh', '-c', `echo first; sleep ${token}; touch ${marker}`], {
    mode: 'workspace-write', workspaceRoot, onStdout: () => { throw boom; },
  }), (error) => error === boom);
  assert.deepStrictEqual(pidsWith(token), []);
  assert.strictEqual(fs.existsSync(marker), false);
});

test('an AbortSignal aborted before the call runs nothing', async () => {
  const marker = path.join(workspaceRoot, 'pre-aborted');
  await assert.rejects(run(['touch', marker], { mode: 'workspace-write', workspaceRoot, signal: AbortSignal.abort() }),
                       SandboxAbortError);
  assert.strictEqual(fs.existsSync(marker), false);
});

test('jobs: start, output, wait, list and kill; kill ends the tree', async () => {
  const done = await start(['sh', '-c', 'echo job-done; exit 3'], { workspaceRoot });
  assert.match(done.handle, /^[0-9a-f]{16}$/);
  const ended = await done.wait({ timeout: 60 });
  assert.strictEqual(ended.state, 'completed');
  assert.strictEqual(ended.exitCode, 3);
  assert.strictEqual(ended.stdout, 'job-done\n');

  const token = `30.${nonce()}`;
  const job = await start(['sh', '-c', `echo job-started; sleep ${token}`], { workspaceRoot });
  await until('the job\'s first output', async () => (await job.output()).stdout.includes('job-started'));
  const pids = await until('the job\'s sleep, seen from outside', () => { const p = pidsWith(token); return p.length && p; });
  const still = await job.wait({ timeout: 1 });
  assert.strictEqual(still.state, 'running');
  assert.ok((await listJobs()).some((entry) => entry.handle === job.handle && entry.state === 'running'));
  await job.kill();
  const killed = await job.output();
  assert.strictEqual(killed.state, 'killed');
  assert.ok(pids.every((pid) => gone(pid, token)));
  assert.deepStrictEqual(pidsWith(token), []);
});

test('bad input is a typed error and runs nothing', async () => {
  const marker = path.join(workspaceRoot, 'bad-input-marker');
  const touch = ['touch', marker];
  const rejectsInput = (promise, pattern) => assert.rejects(promise,
    (error) => error instanceof SandboxInputError && pattern.test(error.message));
  await rejectsInput(run(touch, { mode: 'workspace-write', workspaceRoot, timeout: 601 }), /600/);
  await rejectsInput(run(touch, { mode: 'workspace-write', workspaceRoot, maxProcesess: 3 }), /unknown option maxProcesess/);
  await rejectsInput(run(touch, { mode: 'workspace-write', workspaceRoot, denyRead: 'ok', allowWrite: [1] }), /array of strings/);
  await rejectsInput(run(touch, { mode: 'workspace-write', workspaceRoot, network: { allow: [] } }), /at least one/);
  await rejectsInput(run(touch, { mode: 'read-only', workspaceRoot, allowWrite: [base] }), /workspace-write/);
  await rejectsInput(start(touch, { mode: 'workspace-write', workspaceRoot, timeout: 5 }), /start does not take timeout/);
  await rejectsInput(run([], { workspaceRoot }), /non-empty/);
  await rejectsInput(run(touch, { workspaceRoot, cwd: path.join(base, 'no-such-dir') }), /not an existing directory/);
  assert.strictEqual(fs.existsSync(marker), false);
  await assert.rejects(run(touch, { workspaceRoot, binary: '/nonexistent/dsh-sandbox' }), SandboxUnavailableError);
  await assert.rejects(start(touch, { workspaceRoot, binary: '/nonexistent/dsh-sandbox' }), SandboxUnavailableError);
  assert.strictEqual(fs.existsSync(marker), false);
});

test('the option table maps every policy option to its flag', () => {
  assert.strictEqual(OPTIONS.run.denyRead.flag, '--deny-read');
  assert.strictEqual(OPTIONS.run.denyRead.kind, 'repeatable');
  assert.strictEqual(OPTIONS.run.cwd.flag, '--workdir');
  assert.strictEqual(OPTIONS.confine.cwd.flag, '--cwd');
  assert.strictEqual(OPTIONS.run.noEvidence.kind, 'flag');
  for (const key of ['network', 'allowWrite', 'denyWrite', 'denyRead', 'allowCache', 'session', 'maxProcesses',
    'maxMemory', 'timeout', 'env', 'unsetEnv', 'cwd']) {
    assert.ok(OPTIONS.run[key], key);
  }
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

'use strict';
// The dsh-sandbox Node binding: every call goes through the dsh-sandbox CLI, so the library and
// the CLI can never disagree about what "confined" means. Which option becomes which flag comes
// from options.js, generated from the CLI's own table (man/cli.json). Types: index.d.ts.
const { execFile, execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const OPTIONS = require('./options.js');

const UNAVAILABLE_PREFIX = 'sandbox mode "';
// Keys of the binding itself, never a flag of the CLI.
const BINDING_KEYS = new Set(['binary', 'onStdout', 'onStderr', 'signal', 'sessionId']);

class SandboxError extends Error {
  constructor(message, code, result) {
    super(message);
    this.name = 'SandboxError';
    this.code = code;
    if (result !== undefined) this.result = result;
  }
}

/** Bad input (a usage error, an option the command does not take): nothing ran. */
class SandboxInputError extends SandboxError {
  constructor(message, code = 'SANDBOX_INVALID_INPUT', result) {
    super(message, code, result);
    this.name = 'SandboxInputError';
  }
}

/** No backend can confine it here, the runner failed, or the CLI is missing: nothing ran. */
class SandboxUnavailableError extends SandboxError {
  constructor(message, result) {
    super(message, 'SANDBOX_UNAVAILABLE', result);
    this.name = 'SandboxUnavailableError';
  }
}

/** The call's AbortSignal fired: the whole confined tree was ended. `result` when it had started. */
class SandboxAbortError extends SandboxError {
  constructor(message, result) {
    super(message, 'ABORT_ERR', result);
    this.name = 'AbortError';
  }
}

function makeError(message, code, result) {
  if (code === 'SANDBOX_UNAVAILABLE') return new SandboxUnavailableError(message, result);
  if (code === 'SANDBOX_INVALID_INPUT' || code === 'USAGE') {
    return new SandboxInputError(message, code, result);
  }
  return new SandboxError(message, code, result);
}

// The one `dsh-sandbox: ` line of a failed call.
function errorFromStderr(stderr, result) {
  const lines = String(stderr).split('\n').filter((l) => l.startsWith('dsh-sandbox: '));
  const message = (lines.length ? lines[lines.length - 1] : String(stderr).trim())
    .replace(/^dsh-sandbox: /, '');
  return makeError(message, message.startsWith(UNAVAILABLE_PREFIX) ? 'SANDBOX_UNAVAILABLE'
                                                                   : 'SANDBOX_INVALID_INPUT', result);
}

function notFound(binary) {
  return new SandboxUnavailableError(
    `dsh-sandbox not found (${binary || 'PATH'}): install it, or pass binary: '/path/to/dsh-sandbox'`);
}

function networkValue(value) {
  if (value && typeof value === 'object' && Array.isArray(value.allow)) {
    if (value.allow.length === 0 || !value.allow.every((d) => typeof d === 'string' && d && !d.includes(','))) {
      throw new SandboxInputError('network: allow must list at least one destination, each a non-empty string without commas');
    }
    return `allow:${value.allow.join(',')}`;
  }
  if (typeof value !== 'string') {
    throw new SandboxInputError("network: 'deny', 'inherit', 'allow:NAME,...' or { allow: [NAME, ...] }");
  }
  return value;
}

function scalar(command, key, value) {
  if (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) return String(value);
  throw new SandboxInputError(`${command}: ${key} must be a string or a finite number, not ${typeof value}`);
}

// The flags of `command` for `options`, by the generated table; anything it does not know is
// refused before the CLI starts (nothing runs).
function optionArgs(command, options) {
  const table = OPTIONS[command];
  const args = [];
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined || value === null || BINDING_KEYS.has(key)) continue;
    const entry = table[key];
    if (!entry) {
      const takers = Object.keys(OPTIONS).filter((c) => OPTIONS[c][key]);
      throw new SandboxInputError(takers.length
        ? `${command} does not take ${key} (${takers.join(', ')} do${takers.length === 1 ? 'es' : ''})`
        : `${command}: unknown option ${key}; known: ${Object.keys(table).join(', ')}`);
    }
    if (entry.kind === 'flag') {
      if (typeof value !== 'boolean') throw new SandboxInputError(`${command}: ${key} must be true or false`);
      if (value) args.push(entry.flag);
    } else if (entry.kind === 'repeatable') {
      const values = typeof value === 'string' ? [value] : value;
      if (!Array.isArray(values) || !values.every((v) => typeof v === 'string')) {
        throw new SandboxInputError(`${command}: ${key} must be an array of strings`);
      }
      for (const v of values) args.push(entry.flag, v);
    } else if (entry.type === 'network') {
      args.push(entry.flag, networkValue(value));
    } else if (key === 'cwd') {
      // Node's meaning of cwd: relative to this process's directory (the CLI's --workdir would
      // take a relative one against the workspace root).
      args.push(entry.flag, path.resolve(scalar(command, key, value)));
    } else {
      args.push(entry.flag, scalar(command, key, value));
    }
  }
  return args;
}

function checkArgv(command, argv) {
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((word) => typeof word === 'string')) {
    throw new SandboxInputError(`${command}: argv must be a non-empty array of strings`);
  }
}

// Where the CLI itself starts: the command's cwd when given, so an omitted workspaceRoot still
// defaults to it, as before the binding passed --workdir.
// A missing one is bad input, never reported as a missing CLI (spawn's ENOENT names neither).
function spawnCwd(options) {
  if (options.cwd === undefined || options.cwd === null) return undefined;
  const cwd = path.resolve(String(options.cwd));
  if (!fs.statSync(cwd, { throwIfNoEntry: false })?.isDirectory()) {
    throw new SandboxInputError(`cwd ${JSON.stringify(cwd)} is not an existing directory; create it or pass another`);
  }
  return cwd;
}

function confine(argv, policy, options = {}) {
  checkArgv('confine', argv);
  const merged = { ...options, ...policy };
  const args = ['confine', ...optionArgs('confine', merged), '--', ...argv];
  try {
    const out = execFileSync(merged.binary || 'dsh-sandbox', args, {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], cwd: spawnCwd(merged),
    });
    return JSON.parse(out);
  } catch (error) {
    if (error.code === 'ENOENT' && error.path !== undefined) throw notFound(merged.binary);
    if (error.stderr !== undefined) throw errorFromStderr(error.stderr);
    throw error;
  }
}

function abortError(signal, result, what = 'the run was aborted; its whole command tree was ended') {
  const reason = signal && signal.reason instanceof Error ? `: ${signal.reason.message}` : '';
  return new SandboxAbortError(`${what}${reason}`, result);
}

// Reads `run --json-lines` from `child`; settles with the exit event (or the failure). A callback
// that throws ends the run's tree (SIGTERM, as an abort) and becomes the call's error.
function collectRun(child, options, onDone) {
  const state = { result: null, failure: null, stderr: '' };
  const deliver = (callback, data) => {
    try {
      callback(data);
    } catch (error) {
      if (!state.callbackError) state.callbackError = error;
      child.kill('SIGTERM');
    }
  };
  child.on('error', (error) => {
    state.failure = error.code === 'ENOENT' ? notFound(options.binary) : error;
  });
  child.stderr.on('data', (data) => { state.stderr += data; });
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    let event;
    try { event = JSON.parse(line); } catch { return; }
    if (event.error) state.failure = makeError(event.error.message, event.error.code);
    else if (event.type === 'stdout' && options.onStdout) deliver(options.onStdout, event.data);
    else if (event.type === 'stderr' && options.onStderr) deliver(options.onStderr, event.data);
    else if (event.type === 'exit') state.result = event;
  });
  child.on('close', (code, signal) => onDone(state, code, signal));
}

function run(argv, options = {}) {
  let args;
  let cwd;
  try {
    checkArgv('run', argv);
    // --die-with-parent: if this process dies, even by SIGKILL, the CLI ends the whole tree.
    args = ['run', '--json-lines', '--die-with-parent', ...optionArgs('run', options), '--', ...argv];
    cwd = spawnCwd(options);
  } catch (error) {
    return Promise.reject(error);
  }
  const { signal } = options;
  if (signal && signal.aborted) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    const child = spawn(options.binary || 'dsh-sandbox', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    // dsh-sandbox run forwards SIGTERM to the command's process group and ends the whole tree
    // (after a grace, SIGKILL); it still prints its exit line, interrupted: "SIGTERM".
    const onAbort = () => child.kill('SIGTERM');
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    collectRun(child, options, ({ result, failure, stderr, callbackError }, code, killed) => {
      if (signal) signal.removeEventListener('abort', onAbort);
      if (result) {
        delete result.type;
        result.exitStatus = code ?? 128;
      }
      if (signal && signal.aborted) return reject(abortError(signal, result || undefined));
      if (callbackError) return reject(callbackError);
      if (failure) return reject(failure);
      if (!result) {
        return reject(errorFromStderr(stderr || `dsh-sandbox ended (${code ?? killed}) without a result`));
      }
      if (result.runnerFailed) return reject(errorFromStderr(stderr, result));
      return resolve(result);
    });
  });
}

// One short CLI call (job-*): its JSON on stdout, whatever the exit status (job-output exits
// 75 while the job runs, and with the job's own status after).
function cliJson(binary, args, signal) {
  return new Promise((resolve, reject) => {
    execFile(binary || 'dsh-sandbox', args, { encoding: 'utf8', signal, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        if (error && error.name === 'AbortError') {
          return reject(abortError(signal, undefined, `dsh-sandbox ${args[0]} was aborted (a job goes on)`));
        }
        if (error && error.code === 'ENOENT' && error.path !== undefined) return reject(notFound(binary));
        let value = null;
        try { value = JSON.parse(stdout); } catch { value = null; }
        if (value && value.error) return reject(makeError(value.error.message, value.error.code));
        if (value === null) return reject(errorFromStderr(stderr || `dsh-sandbox ${args[0]} printed nothing`));
        return resolve(value);
      });
  });
}

function cliText(binary, args) {
  return new Promise((resolve, reject) => {
    execFile(binary || 'dsh-sandbox', args, { encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error && error.code === 'ENOENT' && error.path !== undefined) return reject(notFound(binary));
      if (error) return reject(errorFromStderr(stderr));
      return resolve({ stdout, stderr });
    });
  });
}

/** A background job `start` began: it outlives this process until it ends or is killed. */
class SandboxJob {
  constructor(handle, binary) {
    this.handle = handle;
    this.binary = binary;
  }

  /** Its output so far and its state (`state: 'running'` while it runs). */
  output() {
    return cliJson(this.binary, ['job-output', '--json', this.handle]);
  }

  /** Until it ends, or `timeout` seconds pass (then `state` is still 'running'). */
  wait({ timeout, signal } = {}) {
    const args = ['job-wait', '--json'];
    if (timeout !== undefined) args.push('--timeout', scalar('wait', 'timeout', timeout));
    return cliJson(this.binary, [...args, this.handle], signal);
  }

  /** Ends the job and its whole command tree. */
  async kill() {
    await cliText(this.binary, ['job-kill', this.handle]);
  }
}

async function start(argv, options = {}) {
  checkArgv('start', argv);
  const args = ['start', ...optionArgs('start', options), '--', ...argv];
  const cwd = spawnCwd(options);
  const { stdout } = await new Promise((resolve, reject) => {
    execFile(options.binary || 'dsh-sandbox', args, { encoding: 'utf8', cwd },
      (error, out, stderr) => {
        if (error && error.code === 'ENOENT' && error.path !== undefined) return reject(notFound(options.binary));
        if (error) return reject(errorFromStderr(stderr));
        return resolve({ stdout: out });
      });
  });
  return new SandboxJob(stdout.trim(), options.binary);
}

async function listJobs(options = {}) {
  return (await cliJson(options.binary, ['job-list', '--json'])).jobs;
}

/** Ends every job started with `session` (its session log) and their trees. */
async function killSession(session, options = {}) {
  await cliText(options.binary, ['job-kill', '--session', String(session)]);
}

class DshSandboxProvider {
  constructor(options = {}) {
    this.options = { ...options };
  }

  confine(argv, policy) {
    return confine(argv, policy, this.options);
  }

  run(argv, options = {}) {
    return run(argv, { ...this.options, ...options });
  }

  start(argv, options = {}) {
    return start(argv, { ...this.options, ...options });
  }

  listJobs() {
    return listJobs(this.options);
  }
}

module.exports = {
  DshSandboxProvider, SandboxError, SandboxInputError, SandboxUnavailableError, SandboxAbortError,
  SandboxJob, confine, run, start, listJobs, killSession, OPTIONS,
};

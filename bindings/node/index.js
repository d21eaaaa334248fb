'use strict';
// The dsh-sandbox Node binding: every call goes through the dsh-sandbox CLI, so the library and
// the CLI can never disagree about what "confined" means. Types: index.d.ts.
const { execFileSync, spawn } = require('node:child_process');
const readline = require('node:readline');

const UNAVAILABLE_PREFIX = 'sandbox mode "';

class SandboxError extends Error {
  constructor(message, code) {
    super(message);
    this.name = code === 'SANDBOX_UNAVAILABLE' ? 'SandboxUnavailableError' : 'SandboxError';
    this.code = code;
  }
}

class SandboxUnavailableError extends SandboxError {
  constructor(message) {
    super(message, 'SANDBOX_UNAVAILABLE');
  }
}

function makeError(message, code) {
  return code === 'SANDBOX_UNAVAILABLE' ? new SandboxUnavailableError(message)
                                        : new SandboxError(message, code);
}

// The one `dsh-sandbox: ` line of a failed call.
function errorFromStderr(stderr) {
  const line = String(stderr).split('\n').find((l) => l.startsWith('dsh-sandbox: ')) || String(stderr).trim();
  const message = line.replace(/^dsh-sandbox: /, '');
  return makeError(message, message.startsWith(UNAVAILABLE_PREFIX) ? 'SANDBOX_UNAVAILABLE'
                                                                   : 'SANDBOX_INVALID_INPUT');
}

function policyArgs(options) {
  const args = [];
  if (options.mode) args.push('--mode', options.mode);
  if (options.workspaceRoot) args.push('--workspace', options.workspaceRoot);
  if (options.network) args.push('--network', options.network);
  if (options.config) args.push('--config', options.config);
  return args;
}

function confine(argv, policy, options = {}) {
  if (!Array.isArray(argv) || argv.length === 0) {
    throw new SandboxError('confine: argv must be a non-empty array', 'SANDBOX_INVALID_INPUT');
  }
  const args = ['confine', ...policyArgs({ ...options, ...policy }), '--', ...argv];
  try {
    const out = execFileSync(options.binary || 'dsh-sandbox', args, {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
    });
    return JSON.parse(out);
  } catch (error) {
    if (error.code === 'ENOENT') {
      throw new SandboxUnavailableError(`dsh-sandbox not found (${options.binary || 'PATH'}): install it, or pass binary`);
    }
    if (error.stderr !== undefined) throw errorFromStderr(error.stderr);
    throw error;
  }
}

function run(argv, options = {}) {
  const args = ['run', '--json-lines', ...policyArgs(options)];
  if (options.timeout !== undefined) args.push('--timeout', String(options.timeout));
  for (const name of options.env || []) args.push('--env', name);
  for (const name of options.unsetEnv || []) args.push('--unset-env', name);
  args.push('--', ...argv);
  return new Promise((resolve, reject) => {
    const child = spawn(options.binary || 'dsh-sandbox', args, {
      cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let result = null;
    let failure = null;
    let stderr = '';
    child.on('error', (error) => {
      failure = error.code === 'ENOENT'
        ? new SandboxUnavailableError(`dsh-sandbox not found (${options.binary || 'PATH'}): install it, or pass binary`)
        : error;
    });
    child.stderr.on('data', (data) => { stderr += data; });
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const event = JSON.parse(line);
      if (event.error) failure = makeError(event.error.message, event.error.code);
      else if (event.type === 'stdout' && options.onStdout) options.onStdout(event.data);
      else if (event.type === 'stderr' && options.onStderr) options.onStderr(event.data);
      else if (event.type === 'exit') result = event;
    });
    child.on('close', (code, signal) => {
      if (failure) return reject(failure);
      if (!result) return reject(errorFromStderr(stderr || `dsh-sandbox ended (${code ?? signal}) without a result`));
      delete result.type;
      result.exitStatus = code ?? 128;
      if (result.runnerFailed) {
        const error = errorFromStderr(stderr);
        error.result = result;
        return reject(error);
      }
      return resolve(result);
    });
  });
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
}

module.exports = { DshSandboxProvider, SandboxError, SandboxUnavailableError, confine, run };

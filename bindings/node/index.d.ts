// Types of the dsh-sandbox Node binding. The field names are the reference harness's
// (SandboxProvider, ConfinedArgv, RunnerFailureRule) and docs/schema/ for run().

export type SandboxMode = 'read-only' | 'workspace-write' | 'danger-full-access';
export type ConfinedSandboxMode = 'read-only' | 'workspace-write';
export type SandboxEnforcement = 'full' | 'partial';
/**
 * A confined command's network (--network). Default (omitted): 'deny', no network in
 * read-only and workspace-write; 'inherit' opens the caller's network, `allow:NAME,...` only the
 * destinations listed (docs/network.md). danger-full-access keeps the caller's network.
 */
export type NetworkPolicy = 'inherit' | 'deny' | `allow:${string}`;

export interface SandboxPolicy {
  mode: ConfinedSandboxMode;
  workspaceRoot: string;
  sessionId?: string;
  /** Default 'deny': no network unless opened. */
  network?: NetworkPolicy;
}

export interface RunnerFailureRule {
  fatalSignatures: string[];
  informationalLines?: string[];
  allowedExitCodes?: number[];
}

export interface StatusChannel { fd: number; format: string; layer: string; }

export interface ConfinedArgv {
  argv: string[];
  /** The contract's fact: the backend's verdict, as the reference computes it. */
  enforcement: SandboxEnforcement;
  denialSignatures: string[];
  runnerFailureRules: RunnerFailureRule[];
  // This implementation's additions (docs/schema/confine.schema.json).
  backend: string;
  layers: string[];
  ungoverned: string[];
  /** The strict reading: 'partial' exactly when `ungoverned` is not empty (docs/contract.md). */
  strictEnforcement: SandboxEnforcement;
  refused: string[];
  network: string;
  providedFds: unknown[];
  statusChannels: StatusChannel[];
}

export interface SandboxProvider {
  confine(argv: string[], policy: SandboxPolicy): ConfinedArgv;
}

export interface Bound { max: number | null; enforcedBy: string | null; }

// The `dsh-sandbox run --json` object (docs/schema/run.schema.json).
export interface RunResult {
  schemaVersion: 1;
  mode: SandboxMode;
  workspaceRoot: string;
  network: string;
  backend: string | null;
  enforcement: SandboxEnforcement | null;
  strictEnforcement: SandboxEnforcement | null;
  ungoverned: string[];
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  denied: boolean;
  runnerFailed: boolean;
  notStarted: string | null;
  stdout: string;
  stderr: string;
  truncated: { stdout: boolean; stderr: boolean };
  durationMs: number;
  interrupted: string | null;
  bounds: { processes: Bound; memory: Bound; treeKill: string };
  denialSource?: 'kernel' | 'stderr' | null;
  denials?: Array<{ op: string; rule: string; path: string; pid?: number | null; exe?: string }>;
  denialCount?: number;
  /** The status `dsh-sandbox run` exited with (the command's own, 124, 125, 128+N). */
  exitStatus: number;
}

export interface BindingOptions {
  /** The dsh-sandbox program; default: `dsh-sandbox` found on PATH. */
  binary?: string;
  /** A JSON config file (--config). */
  config?: string;
}

export interface RunOptions extends BindingOptions {
  mode?: SandboxMode;
  workspaceRoot?: string;
  /** Default 'deny' in confined modes: no network unless opened ('inherit', 'allow:...'). */
  network?: NetworkPolicy;
  /** Seconds, at most 600 (default 120). */
  timeout?: number;
  /** Names passed through the environment scrub (--env). */
  env?: string[];
  /** Names removed from the command's environment (--unset-env). */
  unsetEnv?: string[];
  /** Where the command starts; default: process.cwd(). */
  cwd?: string;
  onStdout?: (chunk: string) => void;
  onStderr?: (chunk: string) => void;
}

export declare class SandboxError extends Error {
  readonly code: 'SANDBOX_UNAVAILABLE' | 'SANDBOX_INVALID_INPUT' | 'USAGE';
}
export declare class SandboxUnavailableError extends SandboxError {
  readonly code: 'SANDBOX_UNAVAILABLE';
}

/** The reference harness's SandboxProvider, backed by `dsh-sandbox confine`. */
export declare class DshSandboxProvider implements SandboxProvider {
  constructor(options?: BindingOptions);
  confine(argv: string[], policy: SandboxPolicy): ConfinedArgv;
  run(argv: string[], options?: RunOptions): Promise<RunResult>;
}

export declare function confine(argv: string[], policy: SandboxPolicy, options?: BindingOptions): ConfinedArgv;
/** Runs argv confined (`dsh-sandbox run --json-lines`): live output through the callbacks, the outcome at the end. */
export declare function run(argv: string[], options?: RunOptions): Promise<RunResult>;

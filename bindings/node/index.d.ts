// Types of the dsh-sandbox Node binding. The field names are the reference harness's
// (SandboxProvider, ConfinedArgv, RunnerFailureRule) and docs/schema/ for run(). The options of
// run, confine and start are generated from the CLI's table (options.d.ts, from man/cli.json).
import type {
  ConfinePolicyOptions, NetworkAllowList, NetworkPolicy, RunPolicyOptions, StartPolicyOptions,
} from './options';
export type {
  ConfinePolicyOptions, NetworkAllowList, NetworkPolicy, RunPolicyOptions, StartPolicyOptions,
} from './options';

export type SandboxMode = 'read-only' | 'workspace-write' | 'danger-full-access';
export type ConfinedSandboxMode = 'read-only' | 'workspace-write';
export type SandboxEnforcement = 'full' | 'partial';
/** The reference harness's policy, plus every option `confine` takes (path rules, ...). */
export interface SandboxPolicy extends Omit<ConfinePolicyOptions, 'mode' | 'workspaceRoot'> {
  mode: ConfinedSandboxMode;
  workspaceRoot: string;
  /** The reference's field; confine itself keeps no session. */
  sessionId?: string;
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
  policy: EffectivePolicy;
}

export interface SandboxProvider {
  confine(argv: string[], policy: SandboxPolicy): ConfinedArgv;
}


export interface Bound {
  /** The bound's value (tasks, or bytes); null when unlimited. */
  max: number | null;
  /** What enforces it here, e.g. "cgroup2 pids.max"; null when nothing does. */
  enforcedBy: string | null;
}

/** The policy a call ran under, defaults included (the `policy` object of run and confine). */
export interface EffectivePolicy {
  mode: SandboxMode;
  workspaceRoot: string;
  network: 'inherit' | 'deny' | 'allow-list';
  allowWrite: string[];
  denyWrite: string[];
  denyRead: string[];
  allowCache: string[];
  /** Paths kept unwritable and unreadable by default (secrets such as ~/.npmrc). */
  protected: string[];
  networkAllow: string[];
  networkDeny: string[];
}

/** One refused operation the kernel recorded. */
export interface Denial {
  op: string;
  rule: string;
  path: string;
  pid?: number | null;
  exe?: string;
}

/** The `dsh-sandbox run --json` object (docs/schema/run.schema.json), plus exitStatus. */
export interface RunResult {
  schemaVersion: 1;
  mode: SandboxMode;
  /** The canonical workspace root of the run. */
  workspaceRoot: string;
  network: 'inherit' | 'deny' | 'allow-list';
  /** e.g. "bwrap+landlock"; null under danger-full-access or when the runner failed. */
  backend: string | null;
  enforcement: SandboxEnforcement | null;
  strictEnforcement: SandboxEnforcement | null;
  ungoverned: string[];
  exitCode: number | null;
  /** The signal that ended the command, e.g. "SIGKILL". */
  signal: string | null;
  timedOut: boolean;
  /** The sandbox refused a file effect: a wider mode would help. */
  denied: boolean;
  /** The runner failed: the command never ran (run rejects with SandboxUnavailableError then). */
  runnerFailed: boolean;
  /** Why the command never started (program or workdir refused), else null. */
  notStarted: string | null;
  /** The tail of the command's stdout. */
  stdout: string;
  stderr: string;
  truncated: { stdout: boolean; stderr: boolean };
  durationMs: number;
  /** The signal that interrupted dsh-sandbox run itself (an abort sends SIGTERM), else null. */
  interrupted: string | null;
  bounds: { processes: Bound; memory: Bound; treeKill: string };
  denialSource?: 'kernel' | 'stderr' | null;
  denials?: Denial[];
  denialCount?: number;
  policy?: EffectivePolicy;
  /** The status `dsh-sandbox run` exited with (the command's own, 124, 125, 128+N). */
  exitStatus: number;
}

/** A background job's state and output (`dsh-sandbox job-output --json`). */
export interface JobStatus {
  schemaVersion: 1;
  handle: string;
  state: 'running' | 'completed' | 'killed';
  mode: SandboxMode;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  runnerFailed: boolean;
  runnerExitCode: number | null;
  spawnFailed: string | null;
  denied: boolean;
  denial: string | null;
  stdout: string;
  stderr: string;
  /** Output was dropped (the job's spill was full). */
  lossy: boolean;
  /** Files holding the full output, when it outgrew the tail. */
  fullOutput: string[];
  gitState?: string[];
  /** Why the job's session ended it (its mode narrowed below the job's, its log unreadable). */
  endedBySession?: string | null;
  /** The status job-output exits with: 75 while it runs, else the job's. */
  exitStatus: number;
}

/** One line of `dsh-sandbox job-list --json`. */
export interface JobListEntry {
  handle: string;
  state: 'running' | 'completed' | 'killed';
  argv: string[];
  mode: SandboxMode;
  workspace: string;
  session: string | null;
  startedAt: number;
  exitCode: number | null;
  exitStatus: number;
  signal: string | null;
  timedOut: boolean;
  denied: boolean;
  denial: string | null;
  runnerFailed: boolean;
  runnerExitCode: number | null;
  spawnFailed: string | null;
  endedBySession?: string | null;
}

export interface BindingOptions {
  /** The dsh-sandbox program; default: `dsh-sandbox` found on PATH. */
  binary?: string;
  /** A JSON config file (--config). */
  config?: string;
}

export interface RunOptions extends BindingOptions, RunPolicyOptions {
  /**
   * Where the command starts (--workdir), resolved against this process's directory; the CLI
   * starts there too, so an omitted workspaceRoot defaults to it.
   */
  cwd?: string;
  /** Live output, chunk by chunk, as the command writes it. */
  onStdout?: (chunk: string) => void;
  onStderr?: (chunk: string) => void;
  /** Aborting ends the whole confined tree and rejects with SandboxAbortError. */
  signal?: AbortSignal;
}

export interface StartOptions extends BindingOptions, StartPolicyOptions {}

export declare class SandboxError extends Error {
  readonly code: 'SANDBOX_UNAVAILABLE' | 'SANDBOX_INVALID_INPUT' | 'USAGE' | 'ABORT_ERR' | string;
  /** The run's outcome, when the CLI reported one (a runner failure, an aborted run). */
  readonly result?: RunResult;
}
/** Bad input: a usage error, a value out of range, an option the command does not take. Nothing ran. */
export declare class SandboxInputError extends SandboxError {
  readonly code: 'SANDBOX_INVALID_INPUT' | 'USAGE';
}
/** No backend can confine it here, the runner failed, or the CLI is missing. Nothing ran. */
export declare class SandboxUnavailableError extends SandboxError {
  readonly code: 'SANDBOX_UNAVAILABLE';
}
/** The AbortSignal fired: the whole tree was ended. `name` is 'AbortError'. */
export declare class SandboxAbortError extends SandboxError {
  readonly name: 'AbortError';
  readonly code: 'ABORT_ERR';
}

/** A background job: it outlives the call that started it until it ends or is killed. */
export declare class SandboxJob {
  readonly handle: string;
  /** Its output so far and its state. */
  output(): Promise<JobStatus>;
  /** Until it ends, or `timeout` seconds pass (then `state` is still 'running'). */
  wait(options?: { timeout?: number; signal?: AbortSignal }): Promise<JobStatus>;
  /** Ends it and its whole command tree. */
  kill(): Promise<void>;
}

/** The reference harness's SandboxProvider, backed by `dsh-sandbox confine`. */
export declare class DshSandboxProvider implements SandboxProvider {
  constructor(options?: BindingOptions);
  confine(argv: string[], policy: SandboxPolicy): ConfinedArgv;
  run(argv: string[], options?: RunOptions): Promise<RunResult>;
  start(argv: string[], options?: StartOptions): Promise<SandboxJob>;
  listJobs(): Promise<JobListEntry[]>;
}

export declare function confine(argv: string[], policy: SandboxPolicy, options?: BindingOptions): ConfinedArgv;
/** Runs argv confined (`dsh-sandbox run --json-lines`): live output through the callbacks, the outcome at the end. */
export declare function run(argv: string[], options?: RunOptions): Promise<RunResult>;
/** Starts argv confined as a background job (`dsh-sandbox start`). */
export declare function start(argv: string[], options?: StartOptions): Promise<SandboxJob>;
/** This user's background jobs. */
export declare function listJobs(options?: BindingOptions): Promise<JobListEntry[]>;
/** Ends every job started with this session log, and their trees. */
export declare function killSession(session: string, options?: BindingOptions): Promise<void>;

export interface OptionEntry {
  flag: string;
  kind: 'flag' | 'value' | 'repeatable';
  type: string;
  help: string;
  values?: string[];
}
/** The generated table: for run, confine and start, each option's flag, kind and help. */
export declare const OPTIONS: Record<'run' | 'confine' | 'start', Record<string, OptionEntry>>;

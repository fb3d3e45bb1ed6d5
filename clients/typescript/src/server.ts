/**
 * A socket sidecar many clients share: start `session-sidecar serve --socket PATH`
 * and wait until it says it is ready, or attach to one already running.
 *
 * Why: an agent and its observers (a UI, a second process watching the same
 * sessions) talk to one sidecar; starting it and knowing when to connect was
 * left to every author (a race against the socket file appearing).
 */

import { spawn as spawnProcess, type ChildProcess } from "node:child_process";
import { connect as connectSocket, type Socket } from "node:net";
import { ConnectionClosedError } from "./errors.js";

export interface ServeOptions {
  /** The unix socket to serve on (`serve --socket PATH`). */
  socket: string;
  /** What to run, as `SpawnOptions.command`: default `$SESSION_SIDECAR_BIN`, else `session-sidecar` on PATH. */
  command?: string | readonly string[];
  /** `--root DIR`: the sessions root. */
  root?: string;
  /** More arguments after `serve` (e.g. `["--log-level", "info"]`). */
  args?: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** How long to wait for "ready" (ms, default 15000). */
  readyTimeoutMs?: number;
}

/** A `session-sidecar serve --socket` process this program started. */
export class SidecarServer {
  private stderrTail = "";
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    readonly process: ChildProcess,
    /** The socket path clients connect to (`SidecarClient.connectSocket(server.socket)`). */
    readonly socket: string,
  ) {
    process.stderr?.setEncoding("utf8");
    process.stderr?.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-16 * 1024);
    });
    this.exited = new Promise((resolve) => process.once("exit", (code, signal) => resolve({ code, signal })));
  }

  /** The end of the server's log. */
  get stderr(): string {
    return this.stderrTail;
  }

  /**
   * Start `session-sidecar serve --socket PATH` and resolve once it prints
   * `session-sidecar: ready` (the socket accepts connections). Rejects with a
   * `ConnectionClosedError` naming the exit and the log's end if it exits
   * first (the socket is in use, say), or past `readyTimeoutMs`.
   */
  static async start(options: ServeOptions): Promise<SidecarServer> {
    const [command, ...leading] =
      typeof options.command === "string" || options.command === undefined
        ? [options.command ?? (process.env.SESSION_SIDECAR_BIN || "session-sidecar")]
        : options.command;
    if (command === undefined) throw new TypeError("ServeOptions.command is an empty list");
    const args = [...leading, "serve", "--socket", options.socket, ...(options.args ?? [])];
    if (options.root !== undefined) args.push("--root", options.root);
    const child = spawnProcess(command, args, { stdio: ["ignore", "pipe", "pipe"], env: options.env, cwd: options.cwd });
    const server = new SidecarServer(child, options.socket);
    const timeoutMs = options.readyTimeoutMs ?? 15_000;
    await new Promise<void>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new ConnectionClosedError(`session-sidecar serve --socket ${options.socket} was not ready within ${timeoutMs} ms`, { stderr: server.stderr }));
      }, timeoutMs);
      child.stdout!.setEncoding("utf8");
      child.stdout!.on("data", (chunk: string) => {
        out += chunk;
        if (/^session-sidecar: ready$/m.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once("error", (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(new ConnectionClosedError(`could not start ${command}: ${error.message}`, { cause: error }));
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        const tail = server.stderr.trim().split("\n").slice(-3).join("\n");
        reject(new ConnectionClosedError(`session-sidecar serve --socket ${options.socket} ${how} before it was ready${tail ? `; its log ends:\n${tail}` : ""}`, {
          exitCode: code,
          signal,
          stderr: server.stderr,
        }));
      });
    });
    return server;
  }

  /** Stop the server (SIGTERM: it closes every session and removes the socket); SIGKILL past `timeoutMs`. Resolves to its exit code. */
  async stop(timeoutMs = 5000): Promise<number | null> {
    if (this.process.exitCode === null && this.process.signalCode === null) {
      this.process.kill("SIGTERM");
      const timer = setTimeout(() => this.process.kill("SIGKILL"), timeoutMs);
      const { code } = await this.exited;
      clearTimeout(timer);
      return code;
    }
    return (await this.exited).code;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

/**
 * Open a connection to the unix socket at `path`, retrying while it does not
 * exist or refuses (a server still starting) until `waitMs` has passed.
 */
export async function openSocket(path: string, waitMs = 5000): Promise<Socket> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const socket = connectSocket(path);
        socket.once("connect", () => {
          socket.off("error", reject);
          resolve(socket);
        });
        socket.once("error", reject);
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== "ENOENT" && code !== "ECONNREFUSED") || Date.now() >= deadline) {
        throw new ConnectionClosedError(`could not connect to the sidecar's socket ${path}: ${(error as Error).message}`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

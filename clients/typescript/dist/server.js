/**
 * A socket sidecar many clients share: start `session-sidecar serve --socket PATH`
 * and wait until it says it is ready, or attach to one already running.
 *
 * Why: an agent and its observers (a UI, a second process watching the same
 * sessions) talk to one sidecar; starting it and knowing when to connect was
 * left to every author (a race against the socket file appearing).
 */
import { spawn as spawnProcess } from "node:child_process";
import { connect as connectSocket } from "node:net";
import { ConnectionClosedError } from "./errors.js";
/** A `session-sidecar serve --socket` process this program started. */
export class SidecarServer {
    process;
    socket;
    stderrTail = "";
    exited;
    constructor(process, 
    /** The socket path clients connect to (`SidecarClient.connectSocket(server.socket)`). */
    socket) {
        this.process = process;
        this.socket = socket;
        process.stderr?.setEncoding("utf8");
        process.stderr?.on("data", (chunk) => {
            this.stderrTail = (this.stderrTail + chunk).slice(-16 * 1024);
        });
        this.exited = new Promise((resolve) => process.once("exit", (code, signal) => resolve({ code, signal })));
    }
    /** The end of the server's log. */
    get stderr() {
        return this.stderrTail;
    }
    /**
     * Start `session-sidecar serve --socket PATH` and resolve once it prints
     * `session-sidecar: ready` (the socket accepts connections). Rejects with a
     * `ConnectionClosedError` naming the exit and the log's end if it exits
     * first (the socket is in use, say), or past `readyTimeoutMs`.
     */
    static async start(options) {
        const [command, ...leading] = typeof options.command === "string" || options.command === undefined
            ? [options.command ?? (process.env.SESSION_SIDECAR_BIN || "session-sidecar")]
            : options.command;
        if (command === undefined)
            throw new TypeError("ServeOptions.command is an empty list");
        const args = [...leading, "serve", "--socket", options.socket, ...(options.args ?? [])];
        if (options.root !== undefined)
            args.push("--root", options.root);
        const child = spawnProcess(command, args, { stdio: ["ignore", "pipe", "pipe"], env: options.env, cwd: options.cwd });
        const server = new SidecarServer(child, options.socket);
        const timeoutMs = options.readyTimeoutMs ?? 15_000;
        await new Promise((resolve, reject) => {
            let out = "";
            const timer = setTimeout(() => {
                child.kill("SIGKILL");
                reject(new ConnectionClosedError(`session-sidecar serve --socket ${options.socket} was not ready within ${timeoutMs} ms`, { stderr: server.stderr }));
            }, timeoutMs);
            child.stdout.setEncoding("utf8");
            child.stdout.on("data", (chunk) => {
                out += chunk;
                if (/^session-sidecar: ready$/m.test(out)) {
                    clearTimeout(timer);
                    resolve();
                }
            });
            child.once("error", (error) => {
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
    async stop(timeoutMs = 5000) {
        if (this.process.exitCode === null && this.process.signalCode === null) {
            this.process.kill("SIGTERM");
            const timer = setTimeout(() => this.process.kill("SIGKILL"), timeoutMs);
            const { code } = await this.exited;
            clearTimeout(timer);
            return code;
        }
        return (await this.exited).code;
    }
    async [Symbol.asyncDispose]() {
        await this.stop();
    }
}
/**
 * Open a connection to the unix socket at `path`, retrying while it does not
 * exist or refuses (a server still starting) until `waitMs` has passed.
 */
export async function openSocket(path, waitMs = 5000) {
    const deadline = Date.now() + waitMs;
    for (;;) {
        try {
            return await new Promise((resolve, reject) => {
                const socket = connectSocket(path);
                socket.once("connect", () => {
                    socket.off("error", reject);
                    resolve(socket);
                });
                socket.once("error", reject);
            });
        }
        catch (error) {
            const code = error.code;
            if ((code !== "ENOENT" && code !== "ECONNREFUSED") || Date.now() >= deadline) {
                throw new ConnectionClosedError(`could not connect to the sidecar's socket ${path}: ${error.message}`, { cause: error });
            }
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
    }
}

//! A shared sidecar on a unix socket (`session-sidecar serve --socket PATH`): [`Server::start`]
//! runs one and returns once it serves; [`crate::ClientBuilder::connect_unix_waiting`] attaches
//! to one, started here or elsewhere, retrying until it accepts.

use crate::error::{Error, Result};
use crate::Client;
use crate::ClientBuilder;
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A sidecar serving a unix socket, started by [`Server::start`]. Dropping it stops it.
#[derive(Debug)]
pub struct Server {
    child: Child,
    socket: PathBuf,
}

impl Server {
    /// Runs `session-sidecar serve --socket SOCKET ARGS...` (the program is
    /// `$SESSION_SIDECAR_BIN` if set, else `session-sidecar` on `PATH`) and returns once the
    /// sidecar says it is ready (it prints `ready` when it accepts clients), within 30 s.
    pub fn start(socket: impl AsRef<Path>, args: &[&str]) -> Result<Server> {
        let program = match std::env::var_os("SESSION_SIDECAR_BIN") {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => PathBuf::from("session-sidecar"),
        };
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        Server::start_program(program, socket, &args, Duration::from_secs(30))
    }

    /// [`start`](Self::start) with the program, its extra arguments and the time to wait given.
    pub fn start_program(program: impl Into<PathBuf>, socket: impl AsRef<Path>, args: &[OsString], ready_within: Duration) -> Result<Server> {
        let program = program.into();
        let socket = socket.as_ref().to_path_buf();
        let mut child = Command::new(&program)
            .arg("serve")
            .arg("--socket")
            .arg(&socket)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|source| Error::Spawn { program, source })?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (ready_tx, ready) = mpsc::channel();
        std::thread::Builder::new()
            .name("session-sidecar-serve".into())
            .spawn(move || {
                let mut said = false;
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if !said && line.contains("ready") {
                        said = true;
                        let _ = ready_tx.send(());
                    }
                }
            })
            .map_err(Error::Io)?;
        match ready.recv_timeout(ready_within) {
            Ok(()) => Ok(Server { child, socket }),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(Error::Exited(child.wait()?)),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(Error::Timeout { method: "serve --socket".into(), after: ready_within })
            }
        }
    }

    /// The socket it serves.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Attaches a client (options from `builder`) to it.
    pub fn connect(&self, builder: ClientBuilder) -> Result<Client> {
        builder.connect_unix_waiting(&self.socket, Duration::from_secs(10))
    }

    /// Stops it with SIGTERM (it closes its sessions and removes the socket), killing it when
    /// it has not exited within 5 s; its exit status.
    pub fn close(mut self) -> Result<ExitStatus> {
        self.stop()
    }

    fn stop(&mut self) -> Result<ExitStatus> {
        if let Some(status) = self.child.try_wait()? {
            return Ok(status);
        }
        // std has no SIGTERM; the `kill` command sends it.
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).stderr(Stdio::null()).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                return Ok(self.child.wait()?);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

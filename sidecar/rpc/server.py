"""The server object: wires pygls' ``JsonRPCServer`` to our framing, dispatcher and service.

It decides nothing: the protocol answers messages, the handlers call the
service, the dispatcher schedules. ``serve`` runs until ``exit`` or the end
of stdin and returns the process exit code.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Any, BinaryIO

import msgspec
from lsprotocol import converters
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage
from pygls.server import JsonRPCServer

from ..config import Settings
from ..service import SessionService
from .dispatch import Dispatcher
from .framing import FrameError, Framing, FrameWriter, make_reader, open_input
from .messages import ProgressParams
from .protocol import SidecarProtocol

logger = logging.getLogger(__name__)


def make_converter() -> Any:
    """lsprotocol's converter, with params left as plain dicts and msgspec values unstructured.

    Our handlers decode params with ``msgspec.convert``; pygls' default hook
    would turn them into namedtuples, and a request without ``params`` would
    fail to structure and be dropped unanswered.
    """
    converter = converters.get_converter()

    def structure_message(obj: dict[str, Any], cls: type) -> Any:
        return cls(**{"params": None, **obj})

    converter.register_structure_hook(JsonRPCRequestMessage, structure_message)
    converter.register_structure_hook(JsonRPCNotification, structure_message)
    converter.register_unstructure_hook(msgspec.Struct, msgspec.to_builtins)
    return converter


class SidecarServer(JsonRPCServer):
    protocol: SidecarProtocol

    def __init__(
        self,
        root: Path,
        settings: Settings | None = None,
        *,
        framing: Framing = "lsp",
        max_workers: int | None = None,
    ) -> None:
        super().__init__(SidecarProtocol, make_converter, max_workers)
        self.default_root = Path(root).expanduser().absolute()
        self.base_settings = settings or Settings()
        self.framing: Framing = framing
        self.service: SessionService | None = None  # made by initialize
        self.dispatcher = Dispatcher(self.thread_pool, self._send_progress)

        from .handlers import register

        register(self)

    def _send_progress(self, params: ProgressParams) -> None:
        self.protocol.notify("$/progress", params)

    # -- running --------------------------------------------------------------------

    def serve(self, stdin: BinaryIO | None = None, stdout_fd: int | None = None) -> int:
        """Serve until ``exit`` or end of input; the exit code (0 after shutdown or at EOF, 1 on exit without shutdown)."""
        if stdout_fd is None:
            stdout_fd = _claim_stdout()
        try:
            return asyncio.run(self._serve(stdin or sys.stdin.buffer, stdout_fd))
        finally:
            self.shutdown()

    async def _serve(self, stdin: BinaryIO, stdout_fd: int) -> int:
        stream = await open_input(stdin)
        reader = make_reader(self.framing, stream)
        self.protocol.set_frame_writer(FrameWriter(stdout_fd, self.framing))
        logger.info("serving %s framing, sessions root %s", self.framing, self.default_root)
        while self.protocol.exit_code is None:
            try:
                body = await reader.read()
            except FrameError as error:
                logger.warning("bad frame: %s", error.message)
                self.protocol.handle_frame_error(error)
                continue
            if body is None:
                logger.info("end of input: finishing requests in flight and closing sessions")
                break
            try:
                self.protocol.handle_body(body)
            except Exception:  # a bug of ours must not take the server down
                logger.exception("failed to handle a message")
        await self.protocol.drain()
        await asyncio.get_running_loop().run_in_executor(self.thread_pool, self.close_sessions)
        code = self.protocol.exit_code
        return 0 if code is None else code

    def close_sessions(self) -> None:
        """Flush and close every open session; called on shutdown, exit and EOF."""
        if self.service is not None:
            try:
                self.service.close_all()
            except Exception:
                logger.exception("failed to close sessions")


def _claim_stdout() -> int:
    """Keep stdout for protocol messages only.

    The real stdout is moved to a private descriptor, and descriptor 1 (with
    ``sys.stdout``) now points at stderr: a stray ``print`` in any library
    lands in the log instead of corrupting a frame.
    """
    sys.stdout.flush()
    private = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return private

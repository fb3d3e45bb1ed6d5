"""Adapters: agent frameworks keeping their sessions in the sidecar.

Each adapter is a subpackage (``openai_agents``: the OpenAI Agents SDK's
``Session``). An adapter speaks the protocol through ``SidecarClient`` only and
imports its framework's SDK only where it must, so the client package imports
(and the standalone executable freezes it) without any SDK installed; the SDKs
are optional extras (``pip install 'session-sidecar[openai-agents]'``).
"""

"""Tests of session_sidecar_client against a real session-sidecar subprocess."""

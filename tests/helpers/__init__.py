"""Test helpers: the loopback OpenAI-compatible server (the scripted fake judge is
:class:`ragmeter.judges.FakeProvider`)."""

from __future__ import annotations

from helpers.server import FakeOpenAIServer, default_responder, detect_step

__all__ = ["FakeOpenAIServer", "default_responder", "detect_step"]

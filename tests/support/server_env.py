"""The environment the language server under test runs in: this checkout's engine first, the scripted LLM
endpoint's key (tests/support/llm.py), and a config folder of its own (not the tester's)."""

import os
import tempfile

from tests.support.paths import ENGINE

LLM_KEY_ENV = "CUTEGEN_TEST_LLM_KEY"
LLM_KEY = "sk-test-NEVER-WRITE-ME-4242"
SERVER_ENV = {**os.environ, LLM_KEY_ENV: LLM_KEY, "PYTHONPATH": os.pathsep.join(
    [str(ENGINE.parent), *filter(None, [os.environ.get("PYTHONPATH")])]),
              # the user's config folder (the LLM endpoints agent commands used, agent/consent.py)
              "XDG_CONFIG_HOME": tempfile.mkdtemp(prefix="cutegen-test-config-")}

"""The backend's tests, as its authors write them with pytest, against the APNs emulator: a clock
the test moves, faults it scripts, devices it reads. A few seconds of wall-clock time in all.

Run: pytest Examples/emulator/python (the emulator is `unotify`, on PATH or named by $UNOTIFY).
"""

import asyncio
import json
import os
import subprocess
import tempfile
import time
import urllib.request

import pytest

from backend import PushBackend

TOPIC = "com.example.app"


class Emulator:
    """A running `unotify emulator`, and its control API."""

    def __init__(self, document: dict):
        self.document = document
        self.control = document["control"]

    def call(self, method: str, path: str, body: dict = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.control + path, data=data, method=method,
                                         headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
            return json.loads(text) if text else {}

    def advance(self, duration: str) -> dict:
        return self.call("POST", "/v1/clock/advance", {"by": duration})

    def fault(self, **fault) -> dict:
        return self.call("POST", "/v1/faults", fault)

    def received(self, token: str, count: int, wait: float = 3) -> list:
        return self.call("GET", f"/v1/tokens/{token}/received?count={count}&wait={wait}")["pushes"]


@pytest.fixture
def emulator():
    folder = tempfile.mkdtemp()
    endpoints = os.path.join(folder, "emulator.json")
    process = subprocess.Popen([os.environ.get("UNOTIFY", "unotify"), "emulator", "run", "--topic", f"{TOPIC}=3",
                                "--endpoints-file", endpoints], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not os.path.exists(endpoints):
        assert process.poll() is None, "the emulator stopped"
        assert time.monotonic() < deadline, "the emulator was not ready within 30 s"
        time.sleep(0.05)
    with open(endpoints) as file:
        yield Emulator(json.load(file))
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture
def backend(emulator):
    document = emulator.document
    host, port = document["sandbox"].removeprefix("https://").rsplit(":", 1)
    with open(document["keyFile"]) as file:
        key = file.read()
    backend = PushBackend(key=key, key_id=document["keyID"], team_id=document["teamID"], topic=TOPIC,
                          host=host, port=int(port), ca_file=document["caFile"])
    for token in document["topics"][TOPIC]:
        backend.register(token)
    return backend


def test_a_push_reaches_the_device(emulator, backend):
    token = emulator.document["topics"][TOPIC][0]
    outcome = asyncio.run(backend.send(token, "Your order shipped"))
    assert outcome.status == "200"
    [push] = emulator.received(token, count=1)
    assert push["payload"] == {"aps": {"alert": "Your order shipped"}}
    assert push["headers"]["apns-push-type"] == "alert"


def test_an_hour_later_the_old_provider_token_is_expired_and_the_backend_signs_a_new_one(emulator, backend):
    token = emulator.document["topics"][TOPIC][0]

    async def scenario():
        assert (await backend.send(token, "Before")).status == "200"
        emulator.advance("61m")
        # The token the client still holds is refused as APNs refuses it.
        from aioapns import NotificationRequest
        stale = await backend.client().send_notification(NotificationRequest(device_token=token, message={"aps": {"alert": "Stale"}}))
        assert (stale.status, stale.description) == ("403", "ExpiredProviderToken")
        # The backend's own send signs a new token and goes through.
        assert (await backend.send(token, "After")).status == "200"

    asyncio.run(scenario())
    assert backend.token_refreshes == 1
    assert [push["payload"]["aps"]["alert"] for push in emulator.received(token, count=2)] == ["Before", "After"]


def test_a_token_answered_410_is_removed_by_the_backend(emulator, backend):
    gone = emulator.document["topics"][TOPIC][1]
    emulator.fault(action="status", reason="Unregistered", token=gone)
    outcome = asyncio.run(backend.send(gone, "Anyone there?"))
    assert (outcome.status, outcome.reason) == ("410", "Unregistered")
    assert gone not in backend.tokens
    assert emulator.received(gone, count=0, wait=0) == []


def test_the_backend_retries_through_a_503_window(emulator, backend):
    token = emulator.document["topics"][TOPIC][2]
    fault = emulator.fault(action="status", reason="ServiceUnavailable", **{"for": "5m"})

    async def scenario():
        sending = asyncio.create_task(backend.send(token, "Eventually"))
        # Once the backend has met the window, the test closes it by moving time past it.
        deadline = time.monotonic() + 10
        while emulator.call("GET", "/v1/faults")["faults"][0]["fired"] < 1:
            assert time.monotonic() < deadline, "the backend never met the window"
            await asyncio.sleep(0.05)
        await asyncio.to_thread(emulator.advance, "5m")
        return await sending

    outcome = asyncio.run(scenario())
    assert outcome.status == "200" and outcome.attempts >= 2
    assert fault["summary"] == "503 ServiceUnavailable"
    [push] = emulator.received(token, count=1)
    assert push["payload"]["aps"]["alert"] == "Eventually"
    # The delivery log shows each 503 the window injected, then the push's way to the device.
    log = emulator.call("GET", f"/v1/log/{push['headers']['apns-id']}")
    attempts = [[stage["stage"] for stage in attempt["stages"]] for attempt in log["pushes"]]
    assert len(attempts) == outcome.attempts
    assert all(stages == ["injected"] for stages in attempts[:-1])
    assert attempts[-1][0] == "accepted" and attempts[-1][-1] == "acknowledged"

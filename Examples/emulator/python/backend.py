"""A provider's push backend, as teams write one with aioapns: it keeps its users' device tokens,
sends to them, forgets a token APNs says is gone (410), retries what APNs asks to retry (429, 500,
503), and signs a new provider token when APNs says the old one expired.

Nothing here knows of the emulator: pointed at api.push.apple.com it works the same.
"""

import asyncio
import ssl
import uuid
from dataclasses import dataclass, field
from typing import Optional

from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsDevelopmentClientProtocol

RETRIED = {"429", "500", "503"}


@dataclass
class Outcome:
    status: str
    reason: Optional[str]
    attempts: int


@dataclass
class PushBackend:
    key: str
    key_id: str
    team_id: str
    topic: str
    host: str = "api.sandbox.push.apple.com"
    port: int = 443
    ca_file: Optional[str] = None
    retry_delay: float = 0.2
    max_attempts: int = 50
    tokens: set = field(default_factory=set)
    token_refreshes: int = 0
    _client: Optional[APNs] = None

    def client(self) -> APNs:
        if self._client is None:
            APNsDevelopmentClientProtocol.APNS_SERVER = self.host
            APNsDevelopmentClientProtocol.APNS_PORT = self.port
            context = ssl.create_default_context(cafile=self.ca_file)
            self._client = APNs(key=self.key, key_id=self.key_id, team_id=self.team_id, topic=self.topic,
                                use_sandbox=True, ssl_context=context, max_connection_attempts=3)
        return self._client

    def register(self, token: str) -> None:
        self.tokens.add(token)

    async def send(self, token: str, alert: str) -> Outcome:
        """Sends an alert to one token until APNs takes it or refuses it for good."""
        # One apns-id for every attempt: APNs' delivery log shows them together.
        notification_id = str(uuid.uuid4())
        attempts = 0
        while True:
            attempts += 1
            request = NotificationRequest(device_token=token, message={"aps": {"alert": alert}},
                                          notification_id=notification_id, push_type=PushType.ALERT)
            result = await self.client().send_notification(request)
            if result.is_successful:
                return Outcome(result.status, None, attempts)
            if result.status == "403" and result.description == "ExpiredProviderToken":
                # A new client signs a new token; the old connection is left to close.
                self._client = None
                self.token_refreshes += 1
                continue
            if result.status == "410":
                # The app is gone from the device: never send to this token again.
                self.tokens.discard(token)
                return Outcome(result.status, result.description, attempts)
            if result.status in RETRIED and attempts < self.max_attempts:
                await asyncio.sleep(self.retry_delay)
                continue
            return Outcome(result.status, result.description, attempts)

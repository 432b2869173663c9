"""Sends pushes with aioapns (PyPI), an APNs client library used in production, pointed at a gateway.

Prints one JSON line per push: its apns-id, the status and reason the gateway answered, and the
410 timestamp if any. aioapns offers no ALPN and reads every answer frame by frame: a gateway that
falls back to HTTP/1.1 or ends a 200 with an empty DATA frame breaks it.
"""

import argparse
import asyncio
import json
import ssl
import uuid

from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsDevelopmentClientProtocol, APNsProductionClientProtocol


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--key-file", required=True)
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--team", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--production", action="store_true")
    parser.add_argument("--push", action="append", default=[], help="TOKEN=JSON payload; repeatable")
    arguments = parser.parse_args()

    protocol = APNsProductionClientProtocol if arguments.production else APNsDevelopmentClientProtocol
    protocol.APNS_SERVER = arguments.host
    protocol.APNS_PORT = arguments.port
    context = ssl.create_default_context(cafile=arguments.ca)
    with open(arguments.key_file) as file:
        key = file.read()
    client = APNs(key=key, key_id=arguments.key_id, team_id=arguments.team, topic=arguments.topic,
                  use_sandbox=not arguments.production, ssl_context=context, max_connection_attempts=1)
    for item in arguments.push:
        token, payload = item.split("=", 1)
        request = NotificationRequest(device_token=token, message=json.loads(payload),
                                      notification_id=str(uuid.uuid4()), push_type=PushType.ALERT)
        result = await client.send_notification(request)
        print(json.dumps({"id": result.notification_id, "status": result.status,
                          "reason": result.description, "timestamp": result.timestamp}), flush=True)


asyncio.run(main())

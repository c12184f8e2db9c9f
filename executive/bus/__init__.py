"""The message bus between the executive and its watchers: in-process by default, MQTT
(aiomqtt) across processes. Topics and payloads: ``executive.bus.topics``."""

from executive.bus.base import Bus, Message, Subscription
from executive.bus.memory import InProcessBus
from executive.bus.topics import CMD, OUT_TOPICS, TOPICS, mqtt_topic

__all__ = [
    "CMD",
    "OUT_TOPICS",
    "TOPICS",
    "Bus",
    "InProcessBus",
    "Message",
    "Subscription",
    "mqtt_topic",
]

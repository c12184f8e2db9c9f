"""The mission executive, in rooms: ``loop`` (observe-decide-act and its lifecycle),
``planning`` (rounds, the fast planner and the agent chain), ``agents`` (roles, coordinator,
responder), ``engines`` (rules, anthropic, replay), ``words`` (questions, what-ifs,
memories), ``bus`` (in-process and MQTT), ``live`` (the host that wires a run to a bus) and
``traces`` (the store, its sinks, replay). ``contracts`` holds the messages between them."""

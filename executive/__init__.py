"""The real-time core of the mission executive, in rooms: ``loop`` (observe-decide-act and
the plan lifecycle), ``planning`` (the algorithmic planner, the fast tier), ``bus``
(in-process and MQTT) and ``traces`` (the store, its sinks, replay). ``contracts`` holds the
messages and plug points between them and the layers above (``agents``: the dialogue stack;
``mission``: run composition), which the core never imports."""

"""The live mission host: an executive wired to a bus, publishing its scene and answering
the commands, edits and questions that arrive on ``cmd``."""

"""Model-written code never runs with the user's rights: a bubblewrap jail for candidate runs and builds
(`jail`), the resource limits applied inside it (`limits`), and a static gate that refuses new host-side
process/file/network/loading/environment uses before a candidate is built (`gate`)."""

from cutegen.sandbox.jail import Availability, Jail, Limits, availability

__all__ = ["Availability", "Jail", "Limits", "availability"]

"""The Autopilot's strategy memory: which action families helped on which scene types.

Each executed Autopilot step is recorded as (scene type, action family, kept?, score gain).
The perceiver reads the per-family prior next time, so families that keep helping on
portraits (say) are proposed first on the next portrait. Persisted as a small JSON file
under the data directory (``<data_dir>/autopilot_memory.json``); a corrupt or unreadable
file is set aside and a fresh memory starts, so nothing blocks an Autopilot run.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.config import get_settings
from pipelines.files import atomic_write

log = logging.getLogger(__name__)

FILENAME = "autopilot_memory.json"
_VERSION = 1


@dataclass
class FamilyStats:
    """Outcomes of one action family on one scene type."""

    tries: int = 0
    kept: int = 0
    gain: float = 0.0   # summed score gain of the kept steps

    def prior(self) -> float:
        """Mean gain per try, shrunk towards 0 while there are few tries (range ~[-0.1, 0.1])."""
        return self.gain / (self.tries + 2)


@dataclass
class AutopilotMemory:
    """Per-scene, per-family outcome statistics; ``path=None`` keeps it in memory only."""

    path: Path | None = None
    scenes: dict[str, dict[str, FamilyStats]] = field(default_factory=dict)

    @classmethod
    def default_path(cls) -> Path:
        """``<settings.data_dir>/autopilot_memory.json``."""
        return get_settings().data_dir / FILENAME

    @classmethod
    def load(cls, path: Path | str | None = None) -> AutopilotMemory:
        """Read the memory (a missing file gives an empty memory).

        Args:
            path: the JSON file; ``None`` uses ``default_path()``.

        Returns:
            The memory, bound to ``path`` for ``save()``.
        """
        path = Path(path) if path is not None else cls.default_path()
        memory = cls(path=path)
        if not path.exists():
            return memory
        try:
            data = json.loads(path.read_text())
            if data.get("version") != _VERSION:
                raise ValueError(f"unknown version {data.get('version')!r}")
            for scene, families in data["scenes"].items():
                memory.scenes[str(scene)] = {
                    str(fam): FamilyStats(int(s["tries"]), int(s["kept"]), float(s["gain"]))
                    for fam, s in families.items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            log.warning("autopilot memory %s is unreadable (%s); starting afresh", path, err)
            memory.scenes.clear()
        return memory

    def record(self, scene: str, family: str, *, kept: bool, gain: float) -> None:
        """Add one executed step's outcome.

        Args:
            scene: scene type from the perceiver ("portrait", "landscape", …).
            family: action family (the operation name).
            kept: whether the step beat the current image and was kept.
            gain: score after minus score before (counted only when kept).
        """
        stats = self.scenes.setdefault(scene, {}).setdefault(family, FamilyStats())
        stats.tries += 1
        if kept:
            stats.kept += 1
            stats.gain += float(gain)

    def prior(self, scene: str, family: str) -> float:
        """The family's prior on this scene type (0 when never tried)."""
        stats = self.scenes.get(scene, {}).get(family)
        return stats.prior() if stats else 0.0

    def to_json(self) -> dict:
        """A JSON-able dict of the memory."""
        return {"version": _VERSION, "scenes": {
            scene: {fam: {"tries": s.tries, "kept": s.kept, "gain": round(s.gain, 6)}
                    for fam, s in sorted(families.items())}
            for scene, families in sorted(self.scenes.items())}}

    def save(self) -> None:
        """Write atomically to ``path`` (no-op for an in-memory memory)."""
        if self.path is None:
            return
        atomic_write(self.path, json.dumps(self.to_json(), indent=1))

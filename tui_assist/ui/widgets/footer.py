"""The main screen's footer: Textual's, with its keys in the first frame, rebuilt once for a burst
of binding changes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from textual.widgets import Footer

from tui_assist.ui.textual_private import laid_out_footer_keys, prune_detached_watchers, show_footer_keys_now

if TYPE_CHECKING:
    from textual.app import ComposeResult
    from textual.geometry import Region
    from textual.screen import Screen


class KeysFooter(Footer):
    """Textual's footer, rebuilt once however often the bindings change before it is.

    Textual's footer rebuilds all its keys for each change. Focusing the prompt at start-up
    changes them three times before the first frame, so the keys reached the screen later than in
    a bare app. And Textual builds the first keys only after a refresh, so they showed frames after
    the rest of the screen: these are built at once, in the first frame.
    """

    _rebuild_queued = False
    _shown: tuple[object, ...] = ()
    _mount_layout_due = False
    """A rebuild's keys are mounted and their layout asked for; Textual's second request is to come."""

    def bindings_changed(self, screen: Screen) -> None:
        if self._rebuild_queued:
            return  # the queued rebuild reads the bindings as they are when it runs
        showing = bool(screen.app.app_focus and self.is_attached and screen is self.screen)
        if showing:
            if not self.children:
                show_footer_keys_now(self)
            # Textual rebuilds after the next refresh: a layout of the screen of its own, a frame
            # after the one that changed the bindings (a turn's start and end). Rebuilt before
            # that refresh, the keys are laid out with the rest of the frame.
            self.call_next(self.recompose)
        else:
            super().bindings_changed(screen)  # not showing: Textual only notes the bindings ready
        self._rebuild_queued = showing

    async def recompose(self) -> None:
        self._rebuild_queued = False
        # The bindings often "change" to what they were (a resumed conversation changed them
        # twice after the first frame): a rebuild (it mounts every key) only when they would differ.
        shown = self._shown_bindings()
        if shown == self._shown and self.children:
            return
        self._shown = shown
        await super().recompose()
        # The mount asked for the layout of the new keys; Textual's `mount` also schedules that
        # request a second time, which comes after the frame that laid them out: a layout of the
        # whole screen for nothing, at every turn's start and end. (A mount of no keys asks none.)
        self._mount_layout_due = self.is_attached and bool(self.children)
        # Each key binds `compact` to the footer, and Textual drops a removed key's watcher only
        # when `compact` changes, which it never does here: the list would grow with every
        # rebuild (a few a turn), and with it the cost of binding each new key.
        prune_detached_watchers(self, "compact")

    def refresh(
        self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> Self:
        if self._mount_layout_due and layout and not (regions or recompose):
            self._mount_layout_due = False
            return self  # that second request, or one before it, which the second then serves
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def compose(self) -> ComposeResult:
        # A new key's first layout set its virtual size, which asked for a second layout of the
        # whole screen: two for each rebuild, and the keys change as every turn starts and ends.
        # And each key restyled twice as it mounted (its `compact`, then the footer's): it starts
        # with the footer's.
        yield from laid_out_footer_keys(super().compose(), self)

    def _shown_bindings(self) -> tuple[object, ...]:
        """What the keys are built from (`Footer.compose`)."""
        app = self.app
        return (
            self.show_command_palette and app.ENABLE_COMMAND_PALETTE,
            *(
                (key, binding, enabled, tooltip, app.get_key_display(binding))
                for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
            ),
        )

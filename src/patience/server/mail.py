"""Sending e-mail (the password reset links) through an SMTP server named by a URL.

``smtp://[user:password@]host[:port]`` talks plain SMTP (port 25 by default) and switches to TLS with
STARTTLS when the server offers it; ``smtps://…`` (port 465) speaks TLS from the first byte;
``smtp+starttls://…`` (port 587) insists on STARTTLS. A user and password, if any, log in (after TLS).
The standard library's :mod:`smtplib` does the work, on a worker thread: the event loop never waits for
a mail server.
"""

from __future__ import annotations

import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from urllib.parse import unquote, urlsplit

from patience.errors import BadInputError

__all__ = ["Mailer", "safe_smtp_url"]

SCHEMES = {"smtp": 25, "smtps": 465, "smtp+starttls": 587}
TIMEOUT = 20.0


@dataclass(frozen=True)
class Mailer:
    """Where mail goes and whom it comes from."""

    host: str
    port: int
    scheme: str
    sender: str
    user: str | None = None
    password: str | None = None

    @classmethod
    def from_url(cls, url: str, sender: str | None = None) -> Mailer:
        """The mailer of ``url``, or :class:`BadInputError` saying what is wrong with it.

        >>> m = Mailer.from_url("smtps://arena:s%40cret@mail.example", "Arena <arena@mail.example>")
        >>> (m.scheme, m.host, m.port, m.user, m.password, m.sender)
        ('smtps', 'mail.example', 465, 'arena', 's@cret', 'Arena <arena@mail.example>')
        >>> Mailer.from_url("smtp://127.0.0.1:2525").sender
        'patience@127.0.0.1'
        """
        parts = urlsplit(url.strip())
        if parts.scheme not in SCHEMES or not parts.hostname:
            raise BadInputError(f"not an SMTP URL: {safe_smtp_url(url)} (expected smtp://host:port, "
                                "smtps://user:password@host:port or smtp+starttls://...)")
        try:
            port = parts.port or SCHEMES[parts.scheme]
        except ValueError:
            raise BadInputError(f"not an SMTP URL: {safe_smtp_url(url)} (the port is a number)") from None
        return cls(parts.hostname, port, parts.scheme, sender or f"patience@{parts.hostname}",
                   unquote(parts.username) if parts.username else None,
                   unquote(parts.password) if parts.password else None)

    def message(self, to: str, subject: str, body: str) -> EmailMessage:
        msg = EmailMessage()
        msg["From"], msg["To"], msg["Subject"] = self.sender, to, subject
        msg["Date"] = formatdate(localtime=False)
        msg["Message-ID"] = make_msgid(domain=self.sender.rsplit("@", 1)[-1].strip("> ") or None)
        msg["Auto-Submitted"] = "auto-generated"
        msg.set_content(body)
        return msg

    def send(self, to: str, subject: str, body: str) -> None:
        """Send one message (blocking: run it on a thread)."""
        msg = self.message(to, subject, body)
        context = ssl.create_default_context()
        if self.scheme == "smtps":
            server: smtplib.SMTP = smtplib.SMTP_SSL(self.host, self.port, timeout=TIMEOUT, context=context)
        else:
            server = smtplib.SMTP(self.host, self.port, timeout=TIMEOUT)
        with server:
            server.ehlo()
            if self.scheme == "smtp+starttls" or (self.scheme == "smtp" and server.has_extn("starttls")):
                server.starttls(context=context)
                server.ehlo()
            if self.user:
                server.login(self.user, self.password or "")
            server.send_message(msg)


def safe_smtp_url(url: str) -> str:
    """``url`` fit to print: without its password.

    >>> safe_smtp_url("smtps://arena:secret@mail.example:465")
    'smtps://arena@mail.example:465'
    """
    parts = urlsplit(url)
    user = f"{parts.username}@" if parts.username else ""
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{user}{parts.hostname or ''}{port}"

"""Accounts: sign up, sign in, sign out and the display name, with the safeguards they need.

- Passwords are kept only as argon2id hashes (argon2-cffi) with the OWASP parameters (19 MiB, two
  passes), rehashed when the parameters change. Hashing runs on threads of its own, never inside a
  database session nor on the event loop, at most a few at once and 5 a second: a burst waits its
  turn (or is answered 429 with the seconds to wait) instead of taking the database's connections,
  the memory and the duels' event loop. How the turns are shared so that no flood refuses a real
  user: :class:`Hashing`.
- A signed-in browser holds a random session token in an HttpOnly, SameSite=Lax cookie (Secure
  over HTTPS); the database keeps only the token's SHA-256, so a leaked table opens no session.
- Every form post carries a CSRF token: an HMAC of the browser's id under a server secret kept in
  the database (so tokens outlive a restart). A post from another site has neither.
- Failed sign-ins are counted per login name *and* address, and per address, in the database (a
  restart does not forget them); past the limit, sign-in answers 429 with the seconds to wait,
  without looking at the password. A stranger's wrong guesses never lock the owner out: they count
  against the stranger's address. The sign-ins of one address are checked one at a time under a
  lock of the bus (shared by every process), so parallel guesses cannot race past the limit. An
  "address" is an IPv4 address or an IPv6 /64 (:func:`address_group`): one IPv6 host has a /64
  to pick addresses from.
- Sign-ups are limited per address (a sliding window on the bus), and on the whole site: past
  ``SIGNUPS_PER_MINUTE`` new accounts in the last minute (on every process), only an address that
  made no account in the last ``SIGNUP_WINDOW`` seconds may make one (up to ``NEWCOMERS_PER_MINUTE``
  more; the figures are :mod:`patience.server.accounts.service`'s), so that a storm from many
  addresses gets one account an address and then the site's quiet share, while a real newcomer,
  whose address is new, still gets in.
- The browser's solo games count for the account: the browser is linked at sign-up (and at
  sign-in, if no account has it yet).

The service is :mod:`patience.server.accounts.service`, the hashing scheduler
:mod:`patience.server.accounts.hashing`, the database's statements :mod:`patience.server.storage.accounts`;
the HTTP side (forms, cookies) is :mod:`patience.server.web.accounts`.
"""

from patience.server.accounts.hashing import SIGNIN, SIGNUP, TOURNAMENT, Hashing, Lane, owasp_hasher
from patience.server.accounts.service import Accounts
from patience.server.identity import AccountError, User, address_group
from patience.server.storage.accounts import RESET_MINUTES, SESSION_DAYS, RateLimiter

__all__ = ["RESET_MINUTES", "SESSION_DAYS", "SIGNIN", "SIGNUP", "TOURNAMENT", "AccountError", "Accounts", "Hashing",
           "Lane", "RateLimiter", "User", "address_group", "owasp_hasher"]

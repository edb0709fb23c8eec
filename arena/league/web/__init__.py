"""The league over HTTP: a Starlette app (app.py) serving the JSON API and the pages people use.

The API is api.py (described by openapi.py) with the fleet's part in workers.py; the pages are
pages.py (read-only), live.py (games in flight), play.py (a person against a bot), submit.py and
workers.py, all drawn by render.py. Beside them: who is logged in (auth.py), the CSRF guard every
form passes (session.py), request bodies within bounds (bodies.py) and event streams (sse.py).
"""

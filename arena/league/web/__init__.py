"""The league over HTTP: a Starlette app (app.py) with the JSON API (api.py); pages join later."""

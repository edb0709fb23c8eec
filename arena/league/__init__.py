"""The league: a server where people submit bots that then play rated games around the clock.

Imports run one way: web/api -> service -> store, scheduler, executors -> referee, sandbox.
"""

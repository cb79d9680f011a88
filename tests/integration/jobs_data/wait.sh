#!/bin/bash
# Stays in the queue until cancelled (or 5 minutes pass): for tests that count a user's jobs
# after submitting, which where.sh, done in a second once it starts, would race.
sleep 300

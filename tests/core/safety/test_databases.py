"""Framework database resets, admin drops, key-value store flushes, by what the command does."""

from __future__ import annotations

import pytest

from workbench.core.safety import analyze_command


@pytest.mark.parametrize(
    "command",
    [
        "rails db:drop",
        "bin/rails db:reset",
        "bundle exec rake db:drop",
        "rake db:schema:load",
        "RAILS_ENV=production bin/rails db:drop DISABLE_DATABASE_ENVIRONMENT_CHECK=1",
        "rails db:rollback STEP=3",
        "python manage.py flush --noinput",
        "python3 manage.py reset_db",
        "./manage.py migrate app zero",
        'python manage.py shell -c "from app.models import U; U.objects.all().delete()"',
        "django-admin flush",
        "npx prisma migrate reset --force",
        "npx prisma db push --force-reset",
        "npx sequelize-cli db:drop",
        "php artisan migrate:fresh",
        "php artisan db:wipe",
        "mix ecto.reset",
        "alembic downgrade base",
        "flask db downgrade",
        "dotnet ef database drop -f",
        "flyway clean",
        "dropdb -h db.example.com prod",
        "mysqladmin -u root drop shop",
        "mongo shop --eval 'db.dropDatabase()'",
        'mongosh --eval "db.users.deleteMany({})"',
        "mongosh app --eval 'db.logs.drop()'",
        "mongosh app cleanup.js",
        "pg_restore --clean -d app dump.pgdump",
        "mongorestore --drop dump/",
        "redis-cli FLUSHDB",
        "redis-cli -n 2 flushall",
        "redis-cli -h cache FLUSHALL ASYNC",
        "redis-cli DEL session:42",
        "redis-cli CONFIG SET dir /root/.ssh",
        "redis-cli EVAL 'return 1' 0",
        "redis-cli --scan --pattern 'cache:*' | xargs redis-cli del",
        "echo FLUSHALL | redis-cli",
        "redis-cli <<< 'FLUSHDB'",
        "echo flush_all | nc localhost 11211",
        "printf 'flush_all\\r\\n' | nc -q1 cache 11211",
        "etcdctl del --prefix /",
        "consul kv delete -recurse app/",
    ],
)
def test_data_wipes_ask(command: str) -> None:
    assert analyze_command(command).dangerous, command


@pytest.mark.parametrize(
    "command",
    [
        "rails db:migrate",
        "bundle exec rake db:seed",
        "python manage.py migrate",
        "python manage.py sqlflush",
        "./manage.py migrate app zero --plan",
        "npx prisma migrate status",
        "npx prisma generate",
        "alembic upgrade head",
        "alembic downgrade base --sql",
        "php artisan migrate",
        "mix ecto.migrate",
        "redis-cli PING",
        "redis-cli KEYS 'user:*'",
        "redis-cli --scan --pattern 'cache:*'",
        "redis-cli REPLICAOF NO ONE",
        "mongosh --eval 'db.users.find().limit(5)'",
        "echo stats | nc localhost 11211",
        "createdb app_dev",
        "mysqladmin status",
        "etcdctl get --prefix /app",
    ],
)
def test_reading_and_migrating_forward_pass(command: str) -> None:
    verdict = analyze_command(command)
    assert not verdict.dangerous, (command, verdict.reasons)

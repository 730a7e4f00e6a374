# The web tier: a service job in the scheduler's own text format, parsed by the service at plan time.
job "web" {
  datacenters = ["dc1"]
  type        = "service"

  meta {
    team = "platform"
  }

  update {
    max_parallel     = 1
    min_healthy_time = "5s"
    healthy_deadline = "1m"
  }

  group "web" {
    count = 2

    task "server" {
      driver = "docker"

      config {
        image = "nginx:1.27"
      }

      resources {
        cpu    = 200
        memory = 256
      }
    }
  }
}

package devstack

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// gofakes3's module and server package, pinned by a tool line in go.mod:
// the S3 server of familyDynalite. It is Go, built like toxiproxy from
// the module cache, keeps objects in memory, and speaks path-style
// addressing and the SDK's aws-chunked uploads with trailing checksums.
const (
	gofakes3Module  = "github.com/johannesboyne/gofakes3"
	gofakes3Package = "github.com/johannesboyne/gofakes3/cmd/gofakes3"
)

// bucketType is the resource type CreateStack creates buckets for.
const bucketType = "AWS::S3::Bucket"

// startS3 builds (once) and starts the pinned gofakes3 on a free
// 127.0.0.1 port, with an in-memory backend, and returns its endpoint once
// it answers. A port taken before gofakes3 binds it makes it exit: it is
// started again on another.
func startS3(ctx context.Context, opts Options) (string, *child, error) {
	root, err := RepoRoot(opts.Root)
	if err != nil {
		return "", nil, err
	}
	bin, err := toolBinary(ctx, root, gofakes3Module, gofakes3Package)
	if err != nil {
		return "", nil, fmt.Errorf("start gofakes3: %w", err)
	}
	for try := 1; ; try++ {
		port, err := freePort()
		if err != nil {
			return "", nil, fmt.Errorf("start gofakes3: %w", err)
		}
		cmd := exec.Command(bin, "-host", "127.0.0.1:"+strconv.Itoa(port), "-backend", "memory", "-quiet")
		proc, err := startChild(cmd, opts.Stdout, opts.Stderr)
		if err != nil {
			return "", nil, fmt.Errorf("start gofakes3: %w", err)
		}
		url := fmt.Sprintf("http://127.0.0.1:%d", port)
		err = waitHTTP(ctx, url, proc)
		if err == nil {
			return url, proc, nil
		}
		_ = proc.stop(time.Second)
		if try == 3 || ctx.Err() != nil {
			return "", nil, fmt.Errorf("start gofakes3: %w", err)
		}
	}
}

// S3 returns a client for the S3 endpoint, with path-style addressing
// (bucket in the path, as the local servers want it).
func (e *Emulators) S3() *s3.Client {
	return s3.NewFromConfig(e.configAt(e.S3URL), func(o *s3.Options) { o.UsePathStyle = true })
}

// bucketName is the name CloudFormation would give the bucket id without a
// BucketName, without its random suffix: lower case (bucket names allow no
// upper case), at most 63 characters.
func (s *Stack) bucketName(id string) string {
	name := strings.ToLower(s.defaultName(id))
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-.")
	}
	return name
}

// createBucket creates the bucket id, with its BucketName or the name
// CloudFormation would generate, and its lifecycle rules (the emulators
// keep them; they expire nothing in a test's time).
func (s *Stack) createBucket(ctx context.Context, client *s3.Client, id string) error {
	props, err := s.resolveProps(id, "BucketName")
	if err != nil {
		return err
	}
	name, _ := props["BucketName"].(string)
	if name == "" {
		name = s.bucketName(id)
	}
	_, err = client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	var owned *s3types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return err
	}
	s.Buckets[id] = name
	return nil
}

// deleteBucket empties the bucket name and deletes it; one already gone
// is not an error.
func deleteBucket(ctx context.Context, client *s3.Client, name string) error {
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(name)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if isNoSuchBucket(err) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, o := range page.Contents {
			if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(name), Key: o.Key}); err != nil {
				return err
			}
		}
	}
	_, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(name)})
	if isNoSuchBucket(err) {
		return nil
	}
	return err
}

func isNoSuchBucket(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "NoSuchBucket"
}

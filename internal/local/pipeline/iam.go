package pipeline

import (
	"maps"
	"strings"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/iamcheck"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// newRecorder records the requests of st's functions in dir (Options.IAMRecord).
func newRecorder(dir, test string, st *devstack.Stack) (*iamcheck.Recorder, error) {
	params, err := deployedParams(st)
	if err != nil {
		return nil, err
	}
	rec := iamcheck.Stack{
		Name: st.Name, Test: test, Params: params, Region: devstack.Region, AccountID: devstack.AccountID,
		Resources: map[string]map[string]string{},
	}
	keys := map[string]string{} // "table" or "table/index" → partition key
	for id, name := range st.Tables {
		rec.Resources[id] = map[string]string{"": name, "Arn": "arn:aws:dynamodb:" + devstack.Region + ":" + devstack.AccountID + ":table/" + name}
		props := st.Template.Resources[id].Properties
		keys[name] = hashKey(props["KeySchema"])
		gsis, _ := props["GlobalSecondaryIndexes"].([]any)
		for _, g := range gsis {
			gm, _ := g.(map[string]any)
			if index, ok := gm["IndexName"].(string); ok {
				keys[name+"/"+index] = hashKey(gm["KeySchema"])
			}
		}
	}
	for id, q := range st.Queues {
		rec.Resources[id] = map[string]string{"": q.URL, "QueueUrl": q.URL, "Arn": q.ARN, "QueueName": q.Name}
	}
	for id, name := range st.Buckets {
		rec.Resources[id] = map[string]string{"": name, "Arn": "arn:aws:s3:::" + name}
	}
	place := iamcheck.Place{
		Region: devstack.Region, AccountID: devstack.AccountID,
		PartitionKey: func(table, index string) string {
			if index != "" {
				table += "/" + index
			}
			return keys[table]
		},
	}
	return iamcheck.NewRecorder(dir, rec, place, st.Template.ByType(samtemplate.FunctionType))
}

// hashKey returns the HASH attribute of a KeySchema.
func hashKey(schema any) string {
	list, _ := schema.([]any)
	for _, k := range list {
		km, _ := k.(map[string]any)
		if km["KeyType"] == "HASH" {
			name, _ := km["AttributeName"].(string)
			return name
		}
	}
	return ""
}

// deployedParams returns the parameters st stands for in AWS: its own, and
// for each secret the local stack gives a function inline (LocalEnv), the
// secret ARN parameter that enables the same provider in AWS, where the
// inline variable is always empty. A stack that sets the parameter keeps
// its value.
func deployedParams(st *devstack.Stack) (map[string]string, error) {
	params := maps.Clone(st.Params)
	if params == nil {
		params = map[string]string{}
	}
	inline := LocalEnv("")
	for _, fn := range st.Template.ByType(samtemplate.FunctionType) {
		props, err := st.Template.Function(fn)
		if err != nil {
			return nil, err
		}
		env, _ := props["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		for k, v := range vars {
			ref, ok := v.(samtemplate.Ref)
			name, isARN := strings.CutSuffix(k, "_ARN")
			if !ok || !isARN || inline[name] == "" || params[ref.Name] != "" {
				continue
			}
			if _, ok := st.Template.Parameters[ref.Name]; ok {
				params[ref.Name] = "arn:aws:secretsmanager:" + devstack.Region + ":" + devstack.AccountID + ":secret:local-inline-" + ref.Name + "-AbCdEf"
			}
		}
	}
	return params, nil
}
